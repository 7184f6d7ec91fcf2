"""Lesson 12 drive (runs in the child): the trainee's InferShape on shape pairs as data, and AddCustom run through
their tiling and their two aclnn phases on each case, recorded. The grader's replay re-executes the phases'
calls (values only, validated there) and ``observer`` reads what its own acl.nn recorded."""

from engine.host.op_def import GRAPH_SUCCESS, InferShapeContext

from .scenario import FAILED, INFER_CASES, KERNEL_CASES, inputs

RUNS = {name: {} for name, _ in KERNEL_CASES}  # the simulations' settings (the grader's replay uses these)


def collect(exercise, rec) -> None:
    answers = []
    for x_shape, y_shape in INFER_CASES:
        context = InferShapeContext((x_shape, y_shape), 1)
        status = exercise.infer_shape(context)
        answers.append(list(context.output_dims()[0]) if status == GRAPH_SUCCESS else FAILED)
    rec.value("infer", answers)
    for name, shape in KERNEL_CASES:
        _one(exercise, rec, name, shape, None)
    for case in rec.hidden:
        with rec.hidden_case(case):
            _one(exercise, rec, case.run, case.params["shape"], case.params["seed"])


def _one(exercise, rec, name: str, shape, seed) -> None:
    sim = rec.simulation(name)
    x, y = inputs(name, shape, seed)
    z = exercise.add_custom_host(sim, x, y)
    rec.run(name, sim)
    rec.output(f"z_{name}", z)


def hidden_run(case) -> dict:
    """A hidden case's simulation: another chip for ``other_chip``."""
    return {"profile": case.params["profile"]} if "profile" in case.params else {}


def observer(name: str, sim):
    """(In the grader) what the replay's acl.nn recorded of run ``name``: each first phase and whether it ran."""
    return lambda: {f"aclnn_{name}": [dict(r) for r in sim.extra.get("aclnn", [])]}
