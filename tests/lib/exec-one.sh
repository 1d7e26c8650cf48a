#!/bin/sh
# prove --exec helper: bats files run under bats --tap, C tests directly.
case "$1" in
/*) t=$1 ;;
*) t=./$1 ;;
esac
case "$t" in
*.bats) exec bats --tap "$t" ;;
*) exec "$t" ;;
esac
