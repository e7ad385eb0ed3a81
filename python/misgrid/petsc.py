"""PCMISGRID in a running petsc4py: registers "misgrid" as a PC type.

For scripts that cannot pass -dll_append to petsc4py.init (PETSc was
initialised by the time they run, by DOLFINx for example):

    from petsc4py import PETSc
    import misgrid.petsc
    misgrid.petsc.register()            # then ksp.getPC().setType("misgrid")

The plugin is found at $MISGRID_PETSC_PLUGIN, next to the loaded
libmisgrid (an install puts both in lib/), or in this repository's
petsc/build.
"""

import ctypes
import os

from . import _lib

_registered = None


def plugin_path():
    """The path of libmisgrid-petsc.so that register() would load."""
    env = os.environ.get("MISGRID_PETSC_PLUGIN")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for p in (os.path.join(os.path.dirname(os.path.abspath(_lib.path)), "libmisgrid-petsc.so"),
              os.path.join(here, "..", "..", "petsc", "build", "libmisgrid-petsc.so")):
        if os.path.exists(p):
            return os.path.abspath(p)
    raise FileNotFoundError("libmisgrid-petsc.so not found: set MISGRID_PETSC_PLUGIN or build it "
                            "(make -C petsc)")


def register(path=None):
    """Loads the plugin into this process's PETSc and registers the PC type
    "misgrid" (once; later calls return the path loaded). PETSc must be
    initialised: import petsc4py.PETSc first."""
    global _registered
    import petsc4py.PETSc  # noqa: F401  (initialises PETSc if it is not)
    if _registered:
        return _registered
    path = path or plugin_path()
    # The plugin saves Go's SIGURG handler when it loads: PETSc's
    # initialisation may have replaced it since libmisgrid was loaded.
    _lib.keep_go_sigurg()
    plugin = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    err = plugin.PCMISGRIDRegister()
    if err:
        raise RuntimeError("PCMISGRIDRegister failed with PETSc error %d" % err)
    _registered = path
    return path
