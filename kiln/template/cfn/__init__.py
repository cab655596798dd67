"""CloudFormation template versions and their function tables.

Heat has two CFN dialects with a common base: ``HeatTemplateFormatVersion: 2012-12-12``
(no conditions) and ``AWSTemplateFormatVersion: 2010-09-09`` (adds ``Conditions``,
resource/output ``Condition`` and ``Fn::If``). Either version key may appear as a
section in either dialect. HOT 2013-05-23 also accepted most CFN functions; they are
added to its table here (the HOT tables mark them removed from 2014-10-16).
"""

from __future__ import annotations

from kiln.template.cfn import functions as fn
from kiln.template.cfn import logic
from kiln.template.versions import define

_SECTIONS = ("AWSTemplateFormatVersion", "HeatTemplateFormatVersion", "Description",
             "Mappings", "Parameters", "Resources", "Outputs")
_RESOURCE_KEYS = ("Type", "Properties", "Metadata", "DependsOn", "DeletionPolicy",
                  "UpdatePolicy", "Description")
_OUTPUT_KEYS = ("Description", "Value")
_POLICIES = {"Delete": "Delete", "Retain": "Retain", "Snapshot": "Snapshot"}

BASE = define("AWSTemplateFormatVersion", "cfn-base", family="cfn", sections=_SECTIONS,
              resource_keys=_RESOURCE_KEYS, output_keys=_OUTPUT_KEYS,
              conditions_section=None, deletion_policies=_POLICIES, registered=False)
BASE.add_functions({
    "Fn::FindInMap": fn.FindInMap,
    "Fn::GetAZs": fn.GetAZs,
    "Ref": fn.Ref,
    "Fn::GetAtt": fn.GetAtt,
    "Fn::Select": fn.Select,
    "Fn::Join": fn.Join,
})

# Both dialects list these after the base ones, in Heat's order (template_functions
# shows the table in this order).
_LATER = {
    "Fn::Split": fn.Split,
    "Fn::Replace": fn.Replace,
    "Fn::Base64": fn.Base64,
    "Fn::MemberListToMap": fn.MemberListToMap,
    "Fn::ResourceFacade": fn.ResourceFacade,
}

HEAT_20121212 = define("HeatTemplateFormatVersion", "2012-12-12", family="cfn",
                       parent=BASE)
HEAT_20121212.add_functions(_LATER)

AWS_20100909 = define(
    "AWSTemplateFormatVersion", "2010-09-09", family="cfn", parent=BASE,
    sections=(*_SECTIONS, "Conditions"), resource_keys=(*_RESOURCE_KEYS, "Condition"),
    output_keys=(*_OUTPUT_KEYS, "Condition"), conditions_section="Conditions")
AWS_20100909.add_functions({**_LATER, "Fn::If": logic.If})
AWS_20100909.add_condition_functions({
    "Fn::Equals": logic.Equals,
    "Ref": fn.ParamRef,
    "Fn::FindInMap": fn.FindInMap,
    "Fn::Not": logic.Not,
    "Fn::And": logic.And,
    "Fn::Or": logic.Or,
})


class _AnyKey(frozenset[str]):
    """Heat never checks the keys inside a CFN resource (unknown ones are ignored), so
    every key counts as allowed; iterating still lists the ones the dialect knows."""

    def __contains__(self, key: object) -> bool:
        return True


for _version in (HEAT_20121212, AWS_20100909):
    _version.resource_keys = _AnyKey(_version.resource_keys)


def _hot_2013() -> None:
    from kiln.template.hot.defs import V20130523

    V20130523.add_functions({
        "Fn::GetAZs": fn.GetAZs,
        "Ref": fn.Ref,
        "Fn::Select": fn.Select,
        "Fn::Join": fn.Join,
        "Fn::Split": fn.Split,
        "Fn::Replace": fn.Replace,
        "Fn::Base64": fn.Base64,
        "Fn::MemberListToMap": fn.MemberListToMap,
        "Fn::ResourceFacade": fn.ResourceFacade,
    })


_hot_2013()
