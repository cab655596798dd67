"""A Nova server's life once its type has asked Nova for it: waiting for ACTIVE,
the update steps (NIC changes, resize and confirm, rebuild), suspend, resume, check and
delete, and the copy of the server its attributes are answered from.

OS::Nova::Server and AWS::EC2::Instance build the create request from their own
properties and extend this base; neither family imports the other's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kiln.resources.base import ResourceFailure, Token
from kiln.resources.common.cloud import OpenStackResource, ResourceInError

#: compute API microversion of every call (server tags need 2.52+, trusted certs 2.63)
MICROVERSION = "2.79"


class NovaServer(OpenStackResource):
    """A Nova server: the base of the types that make one."""

    client_name = "nova"
    service_type = "compute"
    microversion = MICROVERSION
    secret_data = frozenset({"password"})

    def server_name(self) -> str:
        """The server's name: a physical name made once and kept."""
        stored = self.data.get("server_name")
        if not stored:
            stored = self.physical_resource_name()
            self.data["server_name"] = stored
        return stored

    async def _read(self) -> dict[str, Any] | None:
        answer = await self.api("GET", f"/servers/{self.resource_id}", ok_missing=True)
        if answer is None:
            return None
        server: dict[str, Any] = answer["server"]
        return server

    def live_location(self) -> tuple[str, str] | None:
        return f"/servers/{self.resource_id}", "server"

    async def refresh_live(self) -> None:
        """The server and its ports as they are now (addresses, networks, status)."""
        try:
            server = await self.fetch_live()
            if server is not None:
                await self._remember_ports()
        except ResourceFailure:
            return
        if server is not None:
            self.remember(server)

    async def _remember_ports(self) -> list[dict[str, Any]]:
        ports = await self.api("GET", f"/ports?device_id={self.resource_id}", service="network")
        port_list: list[dict[str, Any]] = ports.get("ports", []) if ports else []
        self.data["ports"] = json.dumps(
            [
                {k: p.get(k) for k in ("id", "network_id", "mac_address", "fixed_ips")}
                for p in port_list
            ]
        )
        return port_list

    async def _settle(self, server: Mapping[str, Any]) -> None:
        """Remember the server and its ports (for the attributes), and point floating
        IPs at ports Nova made (:meth:`_point_floating_ips`)."""
        port_list = await self._remember_ports()
        await self._point_floating_ips(port_list)
        self.remember(server)
        nets = await self.api("GET", "/networks", service="network")
        names = {n["id"]: n["name"] for n in (nets or {}).get("networks", [])}
        self.data["network_names"] = json.dumps(
            {p["network_id"]: names.get(p["network_id"]) for p in port_list}
        )

    async def _point_floating_ips(self, ports: list[dict[str, Any]]) -> None:
        """Point the floating IPs the type's properties name at the ports Nova made
        (*ports*); a type whose properties name none has nothing to do."""

    @staticmethod
    def _fault(server: Mapping[str, Any]) -> ResourceFailure:
        fault = server.get("fault") or {}
        reason = (
            f"Message: {fault.get('message')}, Code: {fault.get('code')}" if fault else "Unknown"
        )
        return ResourceInError(str(server.get("status")), reason)

    async def check_create_complete(self, token: Token) -> bool:
        server = await self._read()
        if server is None:
            raise ResourceFailure(
                f"The server ({self.resource_id}) disappeared while it was being created.",
                exc_type="NotFound",
            )
        status = server.get("status")
        if status == "ACTIVE":
            await self._settle(server)
            return True
        if status in ("ERROR", "DELETED", "SOFT_DELETED"):
            raise self._fault(server)
        return False

    async def _nics_settled(self, nics: Mapping[str, list[str]]) -> bool:
        """Whether Nova lists the attached ports and no longer the detached ones."""
        listed = await self.api("GET", f"/servers/{self.resource_id}/os-interface")
        ports = {i["port_id"] for i in (listed or {}).get("interfaceAttachments", [])}
        return not ports & set(nics.get("gone", ())) and set(nics.get("came", ())) <= ports

    async def check_update_complete(self, token: Token) -> bool:
        """Wait for the NICs, then run the steps (resize, then confirm; rebuild) one by
        one. Every request sent moves the token on, and the engine persists each new
        token: an engine resuming after a crash continues from the last step sent,
        never sending a step's request twice."""
        if token and token.get("nics") and not token.get("nics_settled"):
            if not await self._nics_settled(token["nics"]):
                return False
            token = self.next_token(token, nics_settled=True)
        steps = (token or {}).get("steps") or []
        path = f"/servers/{self.resource_id}"
        while token and token["at"] < len(steps):
            step = steps[token["at"]]
            server = await self._read()
            if server is None:
                raise ResourceFailure(
                    f"The server ({self.resource_id}) disappeared.", exc_type="NotFound"
                )
            status = server.get("status")
            if status == "ERROR":
                raise self._fault(server)
            if not token["started"]:
                if step["do"] == "resize":
                    await self.api(
                        "POST", f"{path}/action", {"resize": {"flavorRef": step["flavor"]}}
                    )
                else:
                    body: dict[str, Any] = {
                        "imageRef": step["image"] or server.get("image", {}).get("id", "")
                    }
                    if step.get("preserve"):
                        body["preserve_ephemeral"] = True
                    if "user_data" in step:
                        body["user_data"] = step["user_data"]
                    await self.api("POST", f"{path}/action", {"rebuild": body})
                self.next_token(token, started=True, seen_busy=False)
                return False
            busy = server.get("OS-EXT-STS:task_state") is not None or status not in (
                "ACTIVE",
                "SHUTOFF",
                "VERIFY_RESIZE",
            )
            if step["do"] == "resize" and status == "VERIFY_RESIZE":
                if not token.get("confirmed"):
                    await self.api("POST", f"{path}/action", {"confirmResize": None})
                self.next_token(token, confirmed=True, seen_busy=True)
                return False
            if busy:
                self.next_token(token, seen_busy=True)
                return False
            if not token.get("seen_busy") and not self._step_done(step, server):
                return False
            token = self.next_token(token, at=token["at"] + 1, started=False, confirmed=False)
        server = await self._read()
        if server is not None:
            await self._settle(server)
        return True

    @staticmethod
    def _step_done(step: Mapping[str, Any], server: Mapping[str, Any]) -> bool:
        """Whether the server already shows the step's result (a resume after a
        restart, or a change so quick no busy state was seen)."""
        if step["do"] == "resize":
            flavor = server.get("flavor") or {}
            return step["flavor"] in (flavor.get("id"), flavor.get("original_name"))
        return (server.get("image") or {}).get("id") == step.get("image")

    # -- delete --------------------------------------------------------------------------
    async def handle_delete(self) -> Token:
        if self.resource_id is None:
            await self._delete_internal_ports()
            return None
        await self.api("DELETE", f"/servers/{self.resource_id}", ok_missing=True)
        return {"server": self.resource_id}

    async def check_delete_complete(self, token: Token) -> bool:
        if token:
            server = await self._read()
            if server is not None and server.get("status") not in ("DELETED", "SOFT_DELETED"):
                if server.get("status") == "ERROR" and server.get("OS-EXT-STS:task_state") is None:
                    # a server in ERROR may need a second delete request
                    await self.api("DELETE", f"/servers/{self.resource_id}", ok_missing=True)
                return False
        await self._delete_internal_ports()
        return True

    async def _delete_internal_ports(self) -> None:
        for port in json.loads(self.data.get("internal_ports") or "[]"):
            await self.api("DELETE", f"/ports/{port['id']}", service="network", ok_missing=True)
        self.data.pop("internal_ports", None)

    # -- suspend, resume, check ---------------------------------------------------------
    async def _action(self, action: str) -> None:
        await self.api("POST", f"/servers/{self.resource_id}/action", {action: None})

    async def _wait_status(self, wanted: str) -> bool:
        server = await self._read()
        if server is None:
            raise ResourceFailure(
                f"The server ({self.resource_id}) could not be found.", exc_type="NotFound"
            )
        if server.get("status") == "ERROR":
            raise self._fault(server)
        if server.get("status") == wanted and server.get("OS-EXT-STS:task_state") is None:
            self.remember(server)
            return True
        return False

    async def handle_suspend(self) -> Token:
        if self.resource_id is None:
            raise ResourceFailure(
                f"Cannot suspend {self.name}, resource_id not set", exc_type="Error"
            )
        await self._action("suspend")
        return None

    async def check_suspend_complete(self, token: Token) -> bool:
        return await self._wait_status("SUSPENDED")

    async def handle_resume(self) -> Token:
        if self.resource_id is None:
            raise ResourceFailure(
                f"Cannot resume {self.name}, resource_id not set", exc_type="Error"
            )
        await self._action("resume")
        return None

    async def check_resume_complete(self, token: Token) -> bool:
        return await self._wait_status("ACTIVE")

    def not_active(self, status: Any) -> ResourceFailure:
        """Heat's check failure for a server that is not ACTIVE."""
        return ResourceFailure(f"'status': expected '['ACTIVE']', got '{status}'", exc_type="Error")

    async def handle_check(self) -> Token:
        server = await self._read()
        if server is None:
            raise ResourceFailure(
                f"The server ({self.resource_id}) could not be found.", exc_type="NotFound"
            )
        if server.get("status") != "ACTIVE":
            raise self.not_active(server.get("status"))
        await self._settle(server)
        return None
