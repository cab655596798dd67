"""HOT versions (every dated version and release alias) and their function tables.

Each version below states only what it adds, changes or removes relative to its parent.
The CFN package adds the CloudFormation functions HOT 2013-05-23 also accepted
(``Ref``, ``Fn::Join`` ...); 2014-10-16 marks them removed here.
"""

from __future__ import annotations

from kiln.template.hot import defs, tables

__all__ = ["defs", "tables"]
