"""Routes of the OpenStack Orchestration API v1 (``/v1/{tenant_id}/...``)."""
