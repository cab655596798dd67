"""`kiln stack ...`: a command-line client for any Heat-compatible orchestration endpoint.

It talks to Kiln or to OpenStack Heat over the Orchestration API v1 only (never to Kiln's
internals), so what it shows is what any client of the endpoint would see. The modules:

- ``connection``: where the endpoint is and how to authenticate (the ``openstack`` CLI's
  ``--os-*`` options and ``OS_*`` variables; keystoneauth1 when an auth URL is given).
- ``api``: the HTTP calls, and Heat's error body turned into one exception.
- ``templates``: a template and its environment files read locally, with every file they
  reference collected into the request's ``files`` map.
- ``events``: where new events come from: Kiln's live event stream, else polling.
- ``watch``: follow an action through the stack's events until it settles.
- ``progress``: the live display of that (a terminal) or plain event lines (anything else).
- ``plan``: an update's plan, resource by resource and property by property.
- ``output``: tables, JSON and YAML.
- ``commands``: the click commands themselves.
"""
