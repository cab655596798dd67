"""Shared test machinery: a real `kiln serve`, database fixtures, the real clients."""
