# Sourced by the NumPy-checked example scripts: sets $py to a python3 that has
# NumPy (Debian's python3-numpy serves /usr/bin/python3; the first python3 on
# PATH may be another) and the mpirun environment, or exits with a message.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
py=python3
$py -c 'import numpy' 2>/dev/null || py=/usr/bin/python3
$py -c 'import numpy' 2>/dev/null || { echo "$(basename "$0"): python3-numpy is required"; exit 1; }
