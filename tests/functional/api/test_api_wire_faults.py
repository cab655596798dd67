"""Heat's fault body, status codes and request ids, answered by the API layer alone."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

BAD = ("The server could not comply with the request since it is either malformed or "
       "otherwise incorrect.")
P = "/v1/demo"
S = P + "/stacks/s1/8c1b2a70-55b8-4d54-a0a0-3b1c5c1ad2a1"


def fault(resp: httpx.Response, code: int, etype: str) -> dict[str, Any]:
    """Assert ``resp`` is Heat's fault body for ``code``/``etype``; return its error part."""
    assert resp.status_code == code, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    body = resp.json()
    assert set(body) == {"code", "title", "explanation", "error"}
    assert body["code"] == code
    assert body["error"]["type"] == etype
    assert body["error"]["traceback"] is None
    err: dict[str, Any] = body["error"]
    return err


def test_root_is_the_version_document_with_300(wire: httpx.Client) -> None:
    resp = wire.get("/")
    assert resp.status_code == 300
    assert resp.json() == {"versions": [{
        "id": "v1.0", "status": "CURRENT",
        "links": [{"rel": "self", "href": str(wire.base_url) + "/v1/"}]}]}


def test_every_response_carries_a_request_id(wire: httpx.Client) -> None:
    ids = set()
    for path in ("/", P + "/stacks?limit=x", "/nowhere"):
        rid = wire.get(path).headers["x-openstack-request-id"]
        assert re.fullmatch(r"req-[0-9a-f-]{36}", rid)
        ids.add(rid)
    assert len(ids) == 3


def test_malformed_json_is_400_with_the_parser_message(wire: httpx.Client) -> None:
    resp = wire.post(P + "/stacks", content=b"{bad",
                     headers={"content-type": "application/json"})
    err = fault(resp, 400, "HTTPBadRequest")
    assert err["message"] == ("Expecting property name enclosed in double quotes: "
                              "line 1 column 2 (char 1)")
    assert resp.json()["title"] == "Bad Request"
    assert resp.json()["explanation"] == BAD


def test_a_body_that_is_not_an_object_counts_as_missing(wire: httpx.Client) -> None:
    for content in (b"[1]", b"", b"42"):
        resp = wire.post(P + "/stacks", content=content,
                         headers={"content-type": "application/json"})
        assert fault(resp, 400, "HTTPBadRequest")["message"] == BAD


def test_a_file_whose_contents_are_not_text_is_a_400_naming_it(wire: httpx.Client) -> None:
    """(Was a 500: the template resource's loader hashed the contents as text.)"""
    body = {"stack_name": "s1", "files": {"child.yaml": {"heat_template_version": "2018-08-31"}},
            "template": {"heat_template_version": "2018-08-31",
                         "resources": {"c": {"type": "child.yaml"}}}}
    for path in (P + "/stacks", P + "/stacks/preview"):
        err = fault(wire.post(path, json=body), 400, "HTTPBadRequest")
        assert err["message"] == 'files: the contents of "child.yaml" must be a string'
    err = fault(wire.put(S, json=body), 400, "HTTPBadRequest")
    assert err["message"] == 'files: the contents of "child.yaml" must be a string'


def test_non_json_content_type_is_a_415_naming_json(wire: httpx.Client) -> None:
    """(Heat leaves such a body unread, a 400; Kiln says why: docs/security.md.)"""
    resp = wire.post(P + "/stacks", content=b'{"stack_name": "a"}',
                     headers={"content-type": "application/xml"})
    assert fault(resp, 415, "HTTPUnsupportedMediaType")["message"] == (
        "Unsupported Content-Type 'application/xml': this request's body must be JSON, "
        "sent as Content-Type: application/json.")


def test_oversize_body_is_refused_before_parsing(wire: httpx.Client) -> None:
    body = json.dumps({"stack_name": "a", "pad": "x" * 5000}).encode()
    resp = wire.post(P + "/stacks", content=body,
                     headers={"content-type": "application/json"})
    err = fault(resp, 400, "RequestLimitExceeded")
    assert err["message"] == (f"Request limit exceeded: JSON body size ({len(body)} bytes) "
                              "exceeds maximum allowed size (4096 bytes).")


def test_oversize_chunked_body_is_refused_too(wire: httpx.Client) -> None:
    def chunks() -> Any:
        yield b'{"stack_name": "a", "pad": "'
        for _ in range(10):
            yield b"x" * 1000
        yield b'"}'
    resp = wire.post(P + "/stacks", content=chunks(),
                     headers={"content-type": "application/json"})
    assert "exceeds maximum allowed size (4096 bytes)" in fault(
        resp, 400, "RequestLimitExceeded")["message"]


def test_unknown_path_is_a_json_404(wire: httpx.Client) -> None:
    for path in ("/nowhere", P + "/bogus", P + "/stacks/a/b/c/d/e/f/g"):
        fault(wire.get(path), 404, "HTTPNotFound")


def test_wrong_method_is_405(wire: httpx.Client) -> None:
    fault(wire.delete(P + "/stacks"), 405, "HTTPMethodNotAllowed")
    fault(wire.put(P + "/build_info"), 405, "HTTPMethodNotAllowed")
    fault(wire.post(S + "/files"), 405, "HTTPMethodNotAllowed")


def test_missing_stack_name_and_template(wire: httpx.Client) -> None:
    err = fault(wire.post(P + "/stacks", json={}), 400, "HTTPBadRequest")
    assert err["message"] == "No stack name specified"
    err = fault(wire.post(P + "/stacks", json={"stack_name": "x"}), 400, "HTTPBadRequest")
    assert err["message"] == "No template specified"


def test_stack_name_pattern(wire: httpx.Client) -> None:
    tpl = {"heat_template_version": "2018-08-31"}
    for name in ("1bad", "has space", "a" * 256, "ünï", "-x"):
        err = fault(wire.post(P + "/stacks", json={"stack_name": name, "template": tpl}),
                    400, "StackValidationFailed")
        assert err["message"] == (
            f'Invalid stack name {name} must contain only alphanumeric or "_-." characters, '
            "must start with alpha and must be 255 characters or less.")
    err = fault(wire.post(P + "/stacks", json={"stack_name": 5, "template": tpl}),
                400, "StackValidationFailed")
    assert err["message"] == "Invalid stack name 5, must be a string"


def test_template_string_errors(wire: httpx.Client) -> None:
    cases = {
        "foo: bar": "Template not in valid format: Template format version not found.",
        "[1]": "Template not in valid format: The template is not a JSON object or YAML "
               "mapping.",
    }
    for text, message in cases.items():
        err = fault(wire.post(P + "/stacks", json={"stack_name": "a", "template": text}),
                    400, "HTTPBadRequest")
        assert err["message"] == message
    err = fault(wire.post(P + "/stacks", json={"stack_name": "a", "template": "foo: [bar"}),
                400, "HTTPBadRequest")
    assert err["message"].startswith("Template not in valid format: Error parsing template "
                                     "[root stack] while parsing a flow sequence")


def test_template_size_limit(wire: httpx.Client) -> None:
    text = "heat_template_version: 2018-08-31\ndescription: " + "x" * 2100
    err = fault(wire.post(P + "/stacks", json={"stack_name": "a", "template": text}),
                400, "RequestLimitExceeded")
    assert err["message"] == (f"Request limit exceeded: Template size ({len(text)} bytes) "
                              "exceeds maximum allowed size (2048 bytes).")


def test_environment_errors(wire: httpx.Client) -> None:
    tpl = {"heat_template_version": "2018-08-31"}
    cases: dict[str, Any] = {
        'environment has wrong section "bogus"': {"bogus": 1},
        'environment has empty section "parameters"': {"parameters": None},
        "The environment is not a valid YAML mapping data type.": "[1]",
    }
    for message, env in cases.items():
        body = {"stack_name": "a", "template": tpl, "environment": env}
        err = fault(wire.post(P + "/stacks", json=body), 400, "HTTPBadRequest")
        assert err["message"] == "Environment not in valid format: " + message
    # a JSON value that is neither a map nor text: Heat 27's bare 400 (seen on the peer)
    for env in ([1], 5):
        body = {"stack_name": "a", "template": tpl, "environment": env}
        err = fault(wire.post(P + "/stacks", json=body), 400, "HTTPBadRequest")
        assert err["message"] == ("The server could not comply with the request since it "
                                  "is either malformed or otherwise incorrect.")


def test_wrong_types_in_create_body(wire: httpx.Client) -> None:
    tpl = {"heat_template_version": "2018-08-31"}
    base = {"stack_name": "a", "template": tpl}
    err = fault(wire.post(P + "/stacks", json={**base, "timeout_mins": "abc"}),
                400, "HTTPBadRequest")
    assert err["message"] == "Only integer is acceptable by 'timeout_mins'."
    err = fault(wire.post(P + "/stacks", json={**base, "converge": True}), 400,
                "HTTPBadRequest")
    assert err["message"] == ("converge flag only supported in stack update (or update "
                              "preview) request.")
    fault(wire.post(P + "/stacks", json={**base, "parameters": [1]}), 400, "HTTPBadRequest")
    fault(wire.post(P + "/stacks", json={**base, "files": [1]}), 400, "HTTPBadRequest")
    fault(wire.post(P + "/stacks", json={**base, "tags": 5}), 400, "AttributeError")
    fault(wire.post(P + "/stacks", json={"stack_name": "a", "template": 5}), 400,
          "HTTPBadRequest")
    err = fault(wire.post(P + "/stacks", json={**base, "tags": "a," + "t" * 81}), 400,
                "HTTPBadRequest")
    assert err["message"] == f'Invalid tag, "{"t" * 81}" is longer than 80 characters'


def test_template_url_scheme_and_fetch_failure(wire: httpx.Client) -> None:
    err = fault(wire.post(P + "/stacks", json={"stack_name": "a",
                                               "template_url": "ftp://x/y"}),
                400, "HTTPBadRequest")
    assert err["message"] == "Could not retrieve template: Invalid URL scheme ftp"
    err = fault(wire.post(P + "/stacks", json={"stack_name": "a",
                                               "template_url": "file:///etc/passwd"}),
                400, "HTTPBadRequest")
    assert err["message"] == "Could not retrieve template: Invalid URL scheme file"


def test_bad_adopt_data(wire: httpx.Client) -> None:
    err = fault(wire.post(P + "/stacks", json={"stack_name": "a", "adopt_stack_data": "{}"}),
                400, "HTTPBadRequest")
    assert err["message"] == "Invalid adopt data: 'template'"


def test_bad_list_filters(wire: httpx.Client) -> None:
    cases = {
        "limit=abc": "Only integer is acceptable by 'limit'.",
        "limit=-1": "Value '-1' is invalid for 'limit' which only accepts non-negative "
                    "integer.",
        "with_count=maybe": 'Unrecognized value "maybe" for "with_count", acceptable values '
                            "are: true, false.",
        "show_nested=x": 'Unrecognized value "x" for "show_nested", acceptable values are: '
                         "true, false.",
        "show_deleted=1": 'Unrecognized value "1" for "show_deleted", acceptable values '
                          "are: true, false.",
    }
    for query, message in cases.items():
        err = fault(wire.get(P + "/stacks?" + query), 400, "HTTPBadRequest")
        assert err["message"] == message
    fault(wire.get(P + "/stacks?sort_dir=up"), 400, "ValueError")


def test_global_config_listing_is_denied_by_heats_default_policy(wire: httpx.Client) -> None:
    """(The all-projects stack listing is the one Kiln's no-auth allows: test_api_tenancy.)"""
    err = fault(wire.get(P + "/software_configs?global_tenant=true"), 403, "Forbidden")
    assert err["message"] == "You are not authorized to use software_configs:global_index."


def test_bad_resource_and_event_params(wire: httpx.Client) -> None:
    err = fault(wire.get(S + "/resources?bogus=1"), 400, "HTTPBadRequest")
    assert err["message"] == "Invalid filter parameters ['bogus']"
    err = fault(wire.get(S + "/resources?nested_depth=x"), 400, "HTTPBadRequest")
    assert err["message"] == "Only integer is acceptable by 'nested_depth'."
    err = fault(wire.get(S + "/events?limit=-1"), 400, "HTTPBadRequest")
    assert err["message"] == ("Value '-1' is invalid for 'limit' which only accepts "
                              "non-negative integer.")
    fault(wire.get(S + "/events?sort_dir=sideways"), 400, "ValueError")


def test_action_body_checks(wire: httpx.Client) -> None:
    assert fault(wire.post(S + "/actions", json={}), 400,
                 "HTTPBadRequest")["message"] == "No action specified"
    assert fault(wire.post(S + "/actions", json={"suspend": None, "resume": None}), 400,
                 "HTTPBadRequest")["message"] == "Multiple actions specified"
    assert fault(wire.post(S + "/actions", json={"explode": None}), 400,
                 "HTTPBadRequest")["message"] == "Invalid action explode specified"


def test_mark_unhealthy_body_checks(wire: httpx.Client) -> None:
    r = S + "/resources/r1"
    assert fault(wire.patch(r, json={"bogus": 1}), 400, "HTTPBadRequest")["message"] == (
        "Invalid keys in resource mark unhealthy {'bogus'}")
    assert fault(wire.patch(r, json={"resource_status_reason": "x"}), 400,
                 "HTTPBadRequest")["message"] == (
        "Missing mandatory (mark_unhealthy) key from mark unhealthy request")
    assert fault(wire.patch(r, json={"mark_unhealthy": "perhaps"}), 400,
                 "HTTPBadRequest")["message"] == (
        'Unrecognized value "perhaps" for "mark_unhealthy", acceptable values are: true, '
        "false.")


def test_generate_template_type_check(wire: httpx.Client) -> None:
    err = fault(wire.get(P + "/resource_types/OS::Heat::None/template?template_type=xml"),
                400, "HTTPBadRequest")
    assert err["message"] == ('Template type is not supported: Invalid template type "xml", '
                              "valid types are: cfn, hot.")


def test_arn_lookup_redirects_without_the_engine(wire: httpx.Client) -> None:
    arn = "arn:openstack:heat::demo:stacks/s1/8c1b2a70-55b8-4d54-a0a0-3b1c5c1ad2a1"
    resp = wire.get(P + "/stacks/" + arn + "?x=1")
    assert resp.status_code == 302
    assert resp.headers["location"] == str(wire.base_url) + S + "?x=1"
    resp = wire.get(P + "/stacks/" + arn + "/resources/r1")
    assert resp.status_code == 302
    assert resp.headers["location"] == str(wire.base_url) + S + "/resources/r1"


def test_options_lists_the_allowed_methods(wire: httpx.Client) -> None:
    resp = wire.options(P + "/stacks")
    assert resp.status_code == 204
    assert resp.headers["allow"] == "GET,POST"
    assert wire.options(S).headers["allow"] == "GET,PUT,PATCH,DELETE"


def test_urls_that_are_not_utf8_or_hold_nul_are_400(wire: httpx.Client) -> None:
    for path in ("/v1/%FF/stacks", P + "/stacks/%C3%28", P + "/stacks/a%00b",
                 P + "/stacks?name=%00", P + "/stacks?name=%FF"):
        fault(wire.get(path), 400, "HTTPBadRequest")


def test_the_openapi_description_is_served(wire: httpx.Client) -> None:
    import yaml

    resp = wire.get("/openapi.yaml")
    assert resp.status_code == 200
    spec = yaml.safe_load(resp.text)
    assert spec["openapi"].startswith("3.")
    assert "/v1/{tenant_id}/stacks" in spec["paths"]


def test_other_api_versions_get_the_version_choices(wire: httpx.Client) -> None:
    for path in ("/v2/demo/stacks", "/v1.1/demo/stacks", "/v3/x"):
        resp = wire.get(path)
        assert resp.status_code == 300
        assert resp.json()["versions"][0]["id"] == "v1.0"
    fault(wire.get("/v1/demo/nothing"), 404, "HTTPNotFound")
