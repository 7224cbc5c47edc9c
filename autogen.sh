#!/bin/sh
# Regenerates configure and Makefile.in (autoconf, automake, libtool).
exec autoreconf -fi "$@"
