"""MATLAB ``.mat`` files holding a sparse adjacency matrix, read as graphs.

The matrix is ``Problem.A`` (the SuiteSparse Matrix Collection's layout), else ``A``,
else the file's only sparse matrix. Its nonzero entries are the edges; node ``i`` is
labelled ``str(i)`` (1-based) and every row is a node, as for Matrix Market files.
"""

import io

import numpy as np

from metricopt.exceptions import InputError
from metricopt.io._records import Records

__all__ = ["parse_mat"]


def parse_mat(data, path, *, keep_values=False):
    """Parse the adjacency matrix of a MATLAB file.

    Parameters
    ----------
    data : bytes
        The file's content (MATLAB 5 format; v7.3 HDF5 files are not read).
    path : str or Path
        Used in error messages.
    keep_values : bool, default=False
        Return the entries' values as weights.

    Returns
    -------
    Records
    """
    import scipy.io
    import scipy.sparse as sp

    try:
        contents = scipy.io.loadmat(io.BytesIO(data))
    except Exception as exc:  # scipy raises several types on malformed or v7.3 files
        raise InputError(f"{path}: not a readable MATLAB file ({exc})") from None
    matrix = None
    problem = contents.get("Problem")
    if problem is not None and problem.dtype.names and "A" in problem.dtype.names:
        matrix = problem["A"][0, 0]
    elif "A" in contents:
        matrix = contents["A"]
    else:
        found = [val for key, val in contents.items() if not key.startswith("__") and sp.issparse(val)]
        matrix = found[0] if len(found) == 1 else None
    if matrix is None or not (sp.issparse(matrix) or isinstance(matrix, np.ndarray)):
        raise InputError(f"{path}: no adjacency matrix (Problem.A or A) in the MATLAB file")
    matrix = sp.coo_matrix(matrix)
    if matrix.shape[0] != matrix.shape[1]:
        raise InputError(f"{path}: the matrix is {matrix.shape[0]} x {matrix.shape[1]}, not square")
    nz = matrix.data != 0
    values = matrix.data[nz].astype(np.float64) if keep_values else None
    if values is not None and not np.all(np.isfinite(values)):
        raise InputError(f"{path}: a matrix entry is not finite")
    labels = np.arange(1, matrix.shape[0] + 1).astype(str).astype(object)
    return Records(matrix.row[nz].astype(np.int64), matrix.col[nz].astype(np.int64), labels,
                   values, int(nz.sum()))
