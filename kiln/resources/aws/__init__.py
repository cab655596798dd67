"""Plugins for the ``AWS::*`` resource types."""
