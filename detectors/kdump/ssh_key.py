"""Checklist rule of an SSH dump target's key: the capture kernel logs in to the host with it to write the dump.

kdump-tools (``SSH``, ``SSH_KEY``) and kdumpctl (``ssh``, ``sshkey``) log in with a private key, by default
/root/.ssh/kdump_id_rsa; ``kdump-config propagate`` / ``kdumpctl propagate`` makes it when absent and copies its
public half into the user's authorized_keys on the host.  Whether the key file exists is read from the root (looked
up, never read); whether the host accepts it is another machine's to say: a step only a person can check
(:attr:`CheckLine.by_hand`), so ``setup`` lists it.  Before 2026-12-07 no rule looked at the key: an SSH target with
a key that did not exist was "[PASS] kdump configuration ... no errors", and setup's plan never named propagate.
"""

from __future__ import annotations

from detectors.kdump.kernel_rules import FIX_UNEXAMINED
from detectors.kdump.util import fail, file_evidence, pass_, unknown, warn
from forensics.model import Evidence, NotAvailable, Severity
from forensics.types import kdump_paths as paths
from forensics.types.kdump import CheckLine, Estimate, KdumpState, SshKey

TITLE = "SSH key for the dump"
HOST_TITLE = "SSH key accepted by the dump host"


def check_ssh_key(state: KdumpState, estimate: Estimate) -> list[CheckLine]:
    """An SSH dump target's key exists; whether its host accepts it is a step by hand.  No line for another
    target."""
    key = state.ssh_key
    target = state.dump_target.entry
    if key is None or target is None:
        return []
    host = target.value
    debian = key.config.path == paths.DEBIAN_CONFIG  # the collector took the key's option from that file
    propagate = "kdump-config propagate" if debian else "kdumpctl propagate"
    why = f"the crash kernel logs in to {host} with it to write the dump: without it no dump is saved"
    named = _named(key, debian)
    evidence = file_evidence(key.config, key.entry.line if key.entry else target.line)
    if isinstance(key.exists, NotAvailable):
        reason = f"whether {key.path} exists ({named}): {key.exists.reason}"
        fix = f"run the check as root (only root may look in {key.path.rsplit('/', 1)[0] or '/'})"
        return [unknown("ssh-key", TITLE, reason, why, fix, evidence, severity=Severity.HIGH)]
    if key.exists:
        accepted = _accepted(key.path, host, propagate, file_evidence(key.config, target.line))
        return [pass_("ssh-key", TITLE, f"{key.path} exists ({named})", evidence), accepted]
    if partial := state.partial():
        # A copy may hold no /root (sos report copies no key): not found there is not missing.
        reason = f"{key.path} ({named}) not found: {partial}"
        return [unknown("ssh-key", TITLE, reason, why, FIX_UNEXAMINED, evidence, severity=Severity.HIGH)]
    detail = f"{key.path} does not exist ({named})"
    restart = "" if debian else ", then systemctl restart kdump (it builds the crash kernel's initramfs with the key)"
    authorize = f"adds its public half to the authorized_keys of {host} (it asks for that password once){restart}"
    if key.fallback:
        # kdumpctl propagate makes the key it logs in with: its default while the configured one does not exist.
        make = (
            f"ssh-keygen -t rsa -N '' -f {key.path} (kdumpctl propagate would make its default {key.fallback}"
            f" instead), then {propagate}: it {authorize}; or remove the sshkey line and run {propagate}"
        )
    else:
        make = f"{propagate}: it makes {key.path} and {authorize}"
    if key.fallback and key.fallback_exists is True:
        # kdumpctl logs in with its default instead, and says so only in its own log at each start.
        detail += f": kdumpctl logs in with its default {key.fallback} instead, which exists"
        fix = f"correct the sshkey line of {key.config.path}, or remove it to use {key.fallback}; then {propagate}"
        accepted = _accepted(key.fallback, host, propagate, file_evidence(key.config, target.line))
        return [warn("ssh-key", TITLE, detail, why, fix, evidence), accepted]
    if isinstance(key.fallback_exists, NotAvailable):
        reason = (
            f"{detail}; whether kdumpctl's default {key.fallback}, used instead, exists: {key.fallback_exists.reason}"
        )
        fix = f"run the check as root (only root may look in {key.fallback.rsplit('/', 1)[0]})"
        return [unknown("ssh-key", TITLE, reason, why, fix, evidence, severity=Severity.HIGH)]
    if key.fallback:
        detail += f", nor does kdumpctl's default {key.fallback}, which it would use instead"
    return [fail("ssh-key", TITLE, detail, why, make, evidence)]


def _named(key: SshKey, debian: bool) -> str:
    """Where the key's path comes from: the configuration's line, or the tooling's default."""
    if key.entry is not None:
        return f"{key.config.path} line {key.entry.line}: {key.entry.text.strip()}"
    option = paths.SSH_KEY_OPTION["debian" if debian else "rhel"]
    return f"the default: {key.config.path} sets no {option}"


def _accepted(path: str, host: str, propagate: str, evidence: tuple[Evidence, ...]) -> CheckLine:
    """Whether the host lets the key in: another machine's authorized_keys, which only a person can check."""
    reason = f"whether {host} lets {path} log in is another machine's to say, not readable from here"
    why = f"a key {host} refuses saves no dump"
    fix = (
        f"as root: ssh -i {path} -o BatchMode=yes {host} true (it must succeed without a password);"
        f" if it fails: {propagate}"
    )
    return unknown("ssh-key-host", HOST_TITLE, reason, why, fix, evidence, severity=Severity.HIGH, by_hand=True)
