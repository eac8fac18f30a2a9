#!/usr/bin/env sh
# Make sure Graphviz's `dot` is installed (used by `joint-tf-publisher graph` for svg/png/pdf).
# Debian/Ubuntu: installs the `graphviz` package (as root, or with sudo) if `dot` is missing.
# Elsewhere, or without root or sudo, it only says what to install; `graph -o tree.dot` works
# without Graphviz.
set -eu
command -v dot >/dev/null 2>&1 && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=$(command -v sudo || echo none)
if command -v apt-get >/dev/null 2>&1 && [ "$SUDO" != none ]; then
    echo "ensure_graphviz: installing Debian package graphviz (for 'joint-tf-publisher graph')"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq graphviz >/dev/null
    command -v dot >/dev/null 2>&1 && exit 0
fi
echo "ensure_graphviz: Graphviz's 'dot' not found; install Graphviz (Debian: apt-get install" \
     "graphviz; https://graphviz.org) to render graphs; .dot output works without it" >&2
