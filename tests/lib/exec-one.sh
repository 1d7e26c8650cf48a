#!/bin/sh
# prove --exec helper: bats files run under bats --tap, C tests directly.
case "$1" in
*.bats) exec bats --tap "$1" ;;
*) exec "$1" ;;
esac
