"""Hostile xacro argument values the tests send (#43.1), shared by the DDS and the offline tests."""

from __future__ import annotations

from pathlib import Path

#: Lines of a xacro file (with a link ``base``) that use the argument ``mode`` inside an
#: expression, the common idiom (its value pasted between the quotes of ``'$(arg mode)'``
#: before xacro evaluates it).
MODE_ARGUMENT = (
    '  <xacro:arg name="mode" default="real"/>\n'
    "  <xacro:if value=\"${'$(arg mode)' == 'sim'}\">\n"
    '    <link name="sim_only"/>\n'
    '    <joint name="sim_mount" type="fixed">\n'
    '      <parent link="base"/><child link="sim_only"/>\n'
    "    </joint>\n"
    "  </xacro:if>\n"
)


def quote_breaking_value(marker: Path) -> str:
    """A ``mode`` value that closes the quote of ``'$(arg mode)'`` and runs ``touch marker``
    through xacro's eval (the issue's payload, as one expression; checked with xacro 2.1)."""
    w = (
        "[c for c in python.vars(python.type)['__subclasses__'](python.type.mro(python.type)[-1])"
        " if 'wrap_close' in python.repr(c)][0]"
    )
    f = f"python.vars({w})['__init__']"
    globals_of_f = f"python.vars(python.type({f}))['__globals__']"
    call = (
        f"python.vars(python.type({globals_of_f}))['__get__']({globals_of_f}, {f})"
        f"['system']('touch {marker}')"
    )
    return f"' + python.str({call}) + '"
