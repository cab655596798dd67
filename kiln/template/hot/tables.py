"""Which HOT function class each version uses; each version lists only its changes."""

from __future__ import annotations

from kiln.template.hot import collections as col
from kiln.template.hot import defs as v
from kiln.template.hot import logic, params, resources, strings
from kiln.template.yaql_function import Yaql

v.V20130523.add_functions({
    "get_param": params.GetParam,
    "get_resource": resources.GetResource,
    "get_attr": resources.GetAttThenSelect,
    "list_join": strings.Join,
    "str_replace": strings.Replace,
    "resource_facade": resources.ResourceFacade,
    "get_file": strings.GetFile,
})
v.V20141016.add_functions({"get_attr": resources.GetAtt})
v.V20150430.add_functions({"repeat": col.Repeat, "digest": strings.Digest})
v.V20151015.add_functions({
    "get_attr": resources.GetAttAllAttributes,
    "list_join": strings.JoinMultiple,
    "str_replace": strings.ReplaceJson,
    "str_split": strings.StrSplit,
})
v.V20160408.add_functions({"map_merge": col.MapMerge})
v.V20161014.add_functions({
    "repeat": col.RepeatWithMap,
    "yaql": Yaql,
    "map_replace": col.MapReplace,
    "if": logic.If,
})
v.V20161014.add_condition_functions({
    "get_param": params.GetParam,
    "equals": logic.Equals,
    "not": logic.Not,
    "and": logic.And,
    "or": logic.Or,
})
v.V20170224.add_functions({
    "filter": col.Filter,
    "str_replace_strict": strings.ReplaceJsonStrict,
})
v.V20170901.add_functions({
    "repeat": col.RepeatWithNestedLoop,
    "make_url": col.MakeURL,
    "list_concat": col.ListConcat,
    "str_replace_vstrict": strings.ReplaceJsonVeryStrict,
    "list_concat_unique": col.ListConcatUnique,
    "contains": logic.Contains,
})
v.V20170901.add_condition_functions({"yaql": Yaql, "contains": logic.Contains})
v.V20210416.add_functions({"if": logic.IfNullable})
