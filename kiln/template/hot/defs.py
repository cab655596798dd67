"""The HOT versions and the functions each one removed (the rest is in tables.py)."""

from __future__ import annotations

from kiln.template.function import Removed
from kiln.template.versions import define

KEY = "heat_template_version"

_POLICIES = {"Delete": "Delete", "Retain": "Retain", "Snapshot": "Snapshot"}

V20130523 = define(
    KEY, "2013-05-23", family="hot",
    sections=(KEY, "description", "parameter_groups", "parameters", "resources", "outputs"),
    resource_keys=("type", "properties", "metadata", "depends_on", "deletion_policy",
                   "update_policy", "description"),
    output_keys=("description", "value"),
    conditions_section=None,
    deletion_policies=_POLICIES)
V20141016 = define(KEY, "2014-10-16", family="hot", parent=V20130523)
V20150430 = define(KEY, "2015-04-30", family="hot", parent=V20141016)
V20151015 = define(KEY, "2015-10-15", family="hot", parent=V20150430)
V20160408 = define(KEY, "2016-04-08", family="hot", parent=V20151015)
V20161014 = define(
    KEY, "2016-10-14", family="hot", parent=V20160408, aliases=("newton",),
    sections=V20160408.sections | {"conditions"},
    resource_keys=V20160408.resource_keys | {"external_id", "condition"},
    output_keys=V20160408.output_keys | {"condition"},
    conditions_section="conditions",
    deletion_policies={**_POLICIES, "delete": "Delete", "retain": "Retain",
                       "snapshot": "Snapshot"})
V20170224 = define(KEY, "2017-02-24", family="hot", parent=V20161014, aliases=("ocata",))
V20170901 = define(KEY, "2017-09-01", family="hot", parent=V20170224, aliases=("pike",))
V20180302 = define(KEY, "2018-03-02", family="hot", parent=V20170901, aliases=("queens",))
V20180831 = define(KEY, "2018-08-31", family="hot", parent=V20180302, aliases=("rocky",))
V20210416 = define(KEY, "2021-04-16", family="hot", parent=V20180831, aliases=("wallaby",))

# CFN functions HOT stopped accepting in 2014-10-16 and 2015-10-15.
V20141016.add_functions({name: Removed for name in (
    "Fn::GetAZs", "Fn::Join", "Fn::Split", "Fn::Replace", "Fn::Base64",
    "Fn::MemberListToMap", "Fn::ResourceFacade", "Ref")})
V20151015.add_functions({"Fn::Select": Removed})
