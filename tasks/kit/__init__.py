"""Training kits: parse and pack on a CPU, train anywhere (``build``, ``job``), release on the CPU (``release``)."""
