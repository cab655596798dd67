"""Heat's policy rules, enforced with oslo.policy (see rules.py and enforcer.py)."""
