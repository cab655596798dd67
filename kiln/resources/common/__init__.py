"""What the plugin families (``aws``, ``heat``, ``openstack``) build on.

A family never imports another family's modules (an import-linter contract); whatever
two families share lives here: the cloud base every service-backed plugin extends
(:mod:`.cloud`), name-or-ID lookups (:mod:`.lookup`), server user data
(:mod:`.userdata`), Swift containers (:mod:`.swift`), scaling groups and their batches,
wait conditions, stack users, alarms, and the bases of the types two families offer
under two names (a Nova server, a Cinder volume, a placeholder, an access policy).
A module here never imports a family either, and registers no resource type: each
type is a class in its family's package.
"""
