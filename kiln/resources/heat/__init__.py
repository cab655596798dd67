"""Plugins for the ``OS::Heat::*`` resource types."""
