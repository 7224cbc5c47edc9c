# hg_with_dir.m4 - helpers for --with-PKG=DIR options.

# HG_DIR_FLAGS(DIR, CPPVAR, LDVAR)
# -------------------------------
# Appends -IDIR/include to CPPVAR and -LDIR/lib64 or -LDIR/lib (whichever
# exists, with a run-time path) to LDVAR.  A DIR that is an install prefix of
# an environment module (module load hdf5 -> $HDF5_DIR) is the common case.
AC_DEFUN([HG_DIR_FLAGS], [
  AS_IF([test -d "$1/include"], [$2="$$2 -I$1/include"])
  for hg_libdir in "$1/lib64" "$1/lib"; do
    AS_IF([test -d "$hg_libdir"], [
      $3="$$3 -L$hg_libdir -Wl,-rpath,$hg_libdir"
      break
    ])
  done
])

# HG_WITH_DIR(NAME, HELP)
# -----------------------
# Declares --with-NAME[=DIR]; sets with_NAME to yes/no/check or a directory.
AC_DEFUN([HG_WITH_DIR], [
  AC_ARG_WITH([$1], [AS_HELP_STRING([--with-$1@<:@=DIR@:>@], [$2])],
              [], [with_$1=check])
])
