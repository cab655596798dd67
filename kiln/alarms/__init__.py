"""Alarms: metrics, alarm rules, their evaluation (the watcher) and their actions, as the
CloudWatch API and the alarm resources use them (see :mod:`kiln.alarms.service`)."""
