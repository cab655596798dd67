"""Who is calling: the authentication modes of ``[paste_deploy] flavor``.

- ``noauth`` (the default of ``kiln serve``): nobody is asked; the project is the URL's.
- ``keystone`` (or an empty flavor, as Heat spells it): every ``/v1`` request carries a
  Keystone token, validated against Keystone with ``[keystone_authtoken]``'s options.
- ``standalone``: ``X-Auth-User``/``X-Auth-Key`` exchanged for a token at
  ``[clients_keystone] auth_uri``.
- ``custombackend``: a plugin from the ``kiln.auth`` entry-point group decides.

Each mode produces a :class:`kiln.auth.caller.Caller`; the API turns it into the
engine's RequestContext and checks Heat's policy rules (``kiln.policy``).
"""
