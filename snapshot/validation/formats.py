"""The name formats of apimachinery (``pkg/api/validate/content``), with its messages.

Each function returns the problems of a value in apimachinery's words, empty when the value
is valid; :mod:`snapshot.validation.names` says which field follows which format.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

__all__ = [
    "C_IDENTIFIER_MSG",
    "C_IDENTIFIER_RE",
    "DEVICE_MAX_ID_LENGTH",
    "DRIVER_NAME_MAX",
    "POOL_NAME_MAX",
    "dns_label",
    "dns_subdomain",
    "label_key",
    "label_value",
]

# apimachinery's pkg/api/validate/content: dns.go, identifier.go, kube.go, errors.go.
_DNS_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN_FMT: Final = _DNS_LABEL_FMT + r"(\." + _DNS_LABEL_FMT + ")*"
_C_IDENTIFIER_FMT: Final = "[A-Za-z_][A-Za-z0-9_]*"
_LABEL_KEY_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT: Final = f"({_LABEL_KEY_FMT})?"
_DNS_LABEL_RE: Final = re.compile(_DNS_LABEL_FMT)
_DNS_SUBDOMAIN_RE: Final = re.compile(_DNS_SUBDOMAIN_FMT)
C_IDENTIFIER_RE: Final = re.compile(_C_IDENTIFIER_FMT)
_LABEL_KEY_RE: Final = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE: Final = re.compile(_LABEL_VALUE_FMT)

DNS_LABEL_MAX: Final = 63
DNS_SUBDOMAIN_MAX: Final = 253
DRIVER_NAME_MAX: Final = 63
POOL_NAME_MAX: Final = 253
DEVICE_MAX_ID_LENGTH: Final = 32
LABEL_MAX: Final = 63


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    """apimachinery's ``RegexError`` wording, double space included."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = "".join(f"{' or ' if i else ''}'{example}', " for i, example in enumerate(examples))
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len(length: int) -> str:
    return f"must be no more than {length} characters"


_DNS_LABEL_MSG: Final = _regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character",
    _DNS_LABEL_FMT,
    "my-name",
    "123-abc",
)
_DNS_SUBDOMAIN_MSG: Final = _regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character",
    _DNS_SUBDOMAIN_FMT,
    "example.com",
)
C_IDENTIFIER_MSG: Final = _regex_error(
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_'",
    _C_IDENTIFIER_FMT,
    "my_name",
    "MY_NAME",
    "MyName",
)
_LABEL_KEY_ERR: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_KEY_MSG: Final = _regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
_LABEL_VALUE_MSG: Final = _regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character",
    _LABEL_VALUE_FMT,
    "MyValue",
    "my_value",
    "12345",
)


# -- the formats (apimachinery's Is* functions): a list of problems, empty when valid ----------


@lru_cache(maxsize=8192)
def dns_label(value: str) -> tuple[str, ...]:
    """``IsDNS1123Label``."""
    errs = []
    if len(value) > DNS_LABEL_MAX:
        errs.append(_max_len(DNS_LABEL_MAX))
    if not _DNS_LABEL_RE.fullmatch(value):
        if _DNS_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(_DNS_LABEL_MSG)
    return tuple(errs)


@lru_cache(maxsize=8192)
def dns_subdomain(value: str) -> tuple[str, ...]:
    """``IsDNS1123Subdomain``."""
    errs = []
    if len(value) > DNS_SUBDOMAIN_MAX:
        errs.append(_max_len(DNS_SUBDOMAIN_MAX))
    if not _DNS_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_DNS_SUBDOMAIN_MSG)
    return tuple(errs)


@lru_cache(maxsize=8192)
def label_key(value: str) -> tuple[str, ...]:
    """``IsLabelKey`` (what Kubernetes calls a qualified name)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend(f"prefix part {msg}" for msg in dns_subdomain(prefix))
    else:
        return (
            f"a valid label key {_LABEL_KEY_MSG} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')",
        )
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > LABEL_MAX:
        errs.append(f"name part {_max_len(LABEL_MAX)}")
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append(f"name part {_LABEL_KEY_MSG}")
    return tuple(errs)


@lru_cache(maxsize=8192)
def label_value(value: str) -> tuple[str, ...]:
    """``IsLabelValue``."""
    errs = []
    if len(value) > LABEL_MAX:
        errs.append(_max_len(LABEL_MAX))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_LABEL_VALUE_MSG)
    return tuple(errs)
