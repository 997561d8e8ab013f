"""Host-name column expressions shared by the inputs and the domain graphs."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

IP_HOST = r"^\[|^[0-9]+(\.[0-9]+){3}$"   # an IPv4 address or a bracketed IPv6 address


def reversed_name(name: Column) -> Column:
    """``www.example.com`` -> ``com.example.www``; IPv4 and bracketed IPv6 hosts unchanged."""
    return F.when(name.rlike(IP_HOST), name).otherwise(F.array_join(F.reverse(F.split(name, r"\.")), "."))
