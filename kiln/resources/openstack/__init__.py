"""Plugins for OpenStack services."""
