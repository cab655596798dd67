"""AWS-style request authentication, shared by every AWS-flavoured API Kiln serves.

The CloudFormation query API (``kiln.api.cfn``), the CloudWatch API and the pre-signed
wait-condition and signal URLs all authenticate the same way: the client signs the
request with an EC2 keypair (SigV2 in the query, SigV4 in the Authorization header or the
query) and the server checks the signature over the request *as it arrived*.

- :mod:`.request`: the request as received (``SignedRequest``) and the claim a client
  makes in it (``Claim``: version, access key, signature, time fields).
- :mod:`.sigv2`, :mod:`.sigv4`: the expected signature for a claim, given the secret.
- :mod:`.credentials`: who may sign. ``Authenticator`` is the pluggable seam: the
  no-auth backend checks signatures locally against keypairs Kiln issued
  (``SecretAuthenticator`` over a ``CredentialLookup``); a Keystone backend posts the
  claim to ``/v3/ec2tokens``.
- :mod:`.errors`: AWS's error family and its XML (or JSON) body.
"""
