"""Every Python line beside its C++: the simulator's pyACL-shaped host calls and pyasc-shaped kernel calls shown
as the ACL C and Ascend C a trainee writes on hardware.

* :mod:`.table` — the one mapping table, Python API name -> C++ template (one line an entry), with what
  differs from CANN and where each form comes from;
* :mod:`.infer` — what the names of a Python module hold (a queue, a local tensor of half, a GM address ...),
  read from the module's ``ast``;
* :mod:`.expr` and :mod:`.stmt` — a Python expression / statement into C++ through the table;
* :mod:`.module` — a whole file into C++ lines, each knowing the Python line it comes from;
* :mod:`.view` — the per-step pane (the C++ of the current line and its neighbours) and a lesson's whole program.

Nothing here runs the code it reads: it is a reading aid built from the source text.
"""
