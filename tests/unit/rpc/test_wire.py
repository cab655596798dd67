"""What crosses the broker (kiln.rpc.wire): a context and an engine's error come out as
they went in, so the API renders the engine's error exactly as one of its own."""

from __future__ import annotations

from kiln import errors
from kiln.api.faults import fault_body
from kiln.engine.model.context import RequestContext
from kiln.rpc.wire import context_from_dict, context_to_dict, error_from_dict, error_to_dict
from kiln.template.errors import TemplateError


def test_context_round_trip() -> None:
    ctx = RequestContext(project_id="p", user_id="u", username="n", roles=("a", "b"),
                         is_admin=True, auth_token="tok", client_auth=("token", {"k": "v"}),
                         service_types=frozenset({"compute"}), auth_key="pw")
    back = context_from_dict(context_to_dict(ctx))
    assert back == ctx
    assert (back.auth_token, back.client_auth, back.auth_key) == ("tok", ("token", {"k": "v"}),
                                                                  "pw")


def test_errors_keep_class_status_and_hint() -> None:
    for exc in (errors.ActionInProgress("busy"),
                errors.StackValidationFailed("bad", path=("resources", "r"), hint="did you?"),
                errors.ResourceTypeUnavailable("OS::Nova::Server", "nova", "gone"),
                errors.ServiceUnavailable("later")):
        back = error_from_dict(error_to_dict(exc))
        assert type(back) is type(exc)
        assert (back.message, back.path, back.hint, back.http_status) == (
            exc.message, exc.path, exc.hint, exc.http_status)
        assert fault_body(back.http_status, back.error_type, back.message, back.hint) == \
            fault_body(exc.http_status, exc.error_type, exc.message, exc.hint)


def test_template_errors_and_unknown_classes() -> None:
    assert issubclass(TemplateError, errors.KilnError)
    unknown = error_from_dict({"module": "kiln.nowhere", "class": "Gone", "message": "m"})
    assert type(unknown) is errors.KilnError and unknown.message == "m"
    outside = error_from_dict({"module": "os", "class": "system", "message": "m"})
    assert type(outside) is errors.KilnError
