"""Scaling arithmetic shared by the scaling groups and policies (pure: no I/O).

:mod:`capacity` turns an adjustment into a new group size, :mod:`cooldown` decides from a
group's metadata whether it may scale now, :mod:`members` chooses which members a
resized or re-defined group keeps, changes, adds and drops.
"""
