"""What a trainee reads in a terminal: a lesson, and the result of a check, in English or Chinese."""

from __future__ import annotations

from .catalog import Lesson
from .grader import VERDICTS, GradeResult
from .selectors import describe

_UI = {
    "en": {
        "lesson": "Lesson",
        "steps": "Steps",
        "questions": "Predict, then run",
        "exercise": "Exercise",
        "choices": "choices",
        "verdict": "Verdict",
        "score": "score",
        "yours": "yours",
        "expected": "expected",
        "hint": "hint",
        "costs": "Cost of your run",
        "bytes": "bytes moved",
        "pipes": "time per pipe (busy, summed over cores; share of kernel time)",
        "util": "utilisation",
        "printed": "your program printed",
        "predictions": "Your predictions (they do not change the verdict)",
        "unanswered": "not answered: predict in PREDICTIONS, then check to see what the simulator says",
        "right": "right",
        "wrong": "not quite",
        "simulator": "the simulator",
        "start": "Start with: ascendsim lesson start {n}; check with: ascendsim lesson check {n}",
        "diagnosis": "diagnosis",
        "diagnoses_hidden": "(the diagnoses of {k} steps are hidden until your first check: ascendsim lesson check "
        "{n}, or ascendsim lesson show {n} --reveal)",
        "level": "Level",
        "objective": "Objective",
        "hidden_kinds": "The check also runs hidden cases, drawn afresh each time (their values are never shown):",
        "hidden": "Hidden cases (drawn afresh at every check; their values are never shown)",
        "passed": "passed",
        "failed": "failed",
        "not_run": "not run",
        "figures": "Yours vs the reference solution (the check's main case)",
        "figure": "figure",
        "reference": "reference",
        "lower": "lower is better",
        "higher": "higher is better",
    },
    "zh": {
        "lesson": "第",
        "steps": "步骤",
        "questions": "先预测，再运行",
        "exercise": "练习",
        "choices": "选项",
        "verdict": "结论",
        "score": "得分",
        "yours": "你的结果",
        "expected": "期望",
        "hint": "提示",
        "costs": "本次运行的开销",
        "bytes": "数据搬运量",
        "pipes": "各流水线耗时（各核忙碌时间之和；占核函数时间的比例）",
        "util": "利用率",
        "printed": "你的程序输出",
        "predictions": "你的预测（不影响结论）",
        "unanswered": "未作答：先在 PREDICTIONS 中写下预测，再检查，即可看到模拟器的结果",
        "right": "正确",
        "wrong": "不对",
        "simulator": "模拟器",
        "start": "开始：ascendsim lesson start {n}；检查：ascendsim lesson check {n}",
        "diagnosis": "诊断",
        "diagnoses_hidden": "（{k} 个步骤的诊断在你第一次检查之后显示：ascendsim lesson check {n}，"
        "或 ascendsim lesson show {n} --reveal）",
        "level": "级别",
        "objective": "目标",
        "hidden_kinds": "检查还会运行隐藏用例，每次重新抽取（其具体数值从不显示）：",
        "hidden": "隐藏用例（每次检查时重新抽取；具体数值从不显示）",
        "passed": "通过",
        "failed": "未通过",
        "not_run": "未运行",
        "figures": "你的结果与参考答案对比（检查的主用例）",
        "figure": "指标",
        "reference": "参考答案",
        "lower": "越低越好",
        "higher": "越高越好",
    },
}


def lesson_heading(lesson: Lesson, lang: str) -> str:
    if lang == "zh":
        return f"第 {lesson.number} 课：{lesson.title['zh']}"
    return f"Lesson {lesson.number}: {lesson.title['en']}"


def lesson_objective(lesson: Lesson, lang: str) -> str:
    """ "Objective (beginner): ..." in ``lang``: what the exercise must achieve, and the lesson's level."""
    ui = _UI[lang]
    if lang == "zh":
        return f"{ui['objective']}（{lesson.level_name(lang)}）：{lesson.objective.text[lang]}"
    return f"{ui['objective']} ({lesson.level_name(lang)}): {lesson.objective.text[lang]}"


def lesson_summary(lesson: Lesson, lang: str) -> str:
    """What a lesson's player narrates before its first step: its summary, then its objective and level."""
    return f"{lesson.summary[lang]}\n\n{lesson_objective(lesson, lang)}"


def render_lesson(lesson: Lesson, lang: str, revealed: bool = False) -> str:
    """The lesson as text; its steps' diagnoses only when ``revealed`` (:mod:`lessons.progress`)."""
    ui = _UI[lang]
    sep = "：" if lang == "zh" else ": "
    lines = [
        lesson_heading(lesson, lang),
        f"{ui['level']}{sep}{lesson.level_name(lang)}",
        "",
        lesson.summary[lang],
        "",
        f"== {ui['steps']} ==",
    ]
    hidden = 0
    for i, step in enumerate(lesson.steps, 1):
        lines.append(f"[{i}] ({describe(step.selector)})")
        lines.extend("    " + line for line in step.text[lang].splitlines())
        if step.diagnosis and revealed:
            lines.append(f"    -- {ui['diagnosis']} --")
            lines.extend("    " + line for line in step.diagnosis[lang].splitlines())
        hidden += bool(step.diagnosis) and not revealed
        lines.append("")
    if hidden:
        lines += [ui["diagnoses_hidden"].format(k=hidden, n=lesson.number), ""]
    if lesson.questions:
        lines.append(f"== {ui['questions']} ==")
        for q in lesson.questions:
            names = q.labels.get(lang) or q.choices
            lines.append(f"- {q.id}: {q.text[lang]}  ({ui['choices']}: {' / '.join(names)})")
        lines.append("")
    lines.append(f"== {ui['exercise']} ==")
    lines.append(f"{ui['objective']}{sep}{lesson.objective.text[lang]}")
    lines.append("")
    lines.append(lesson.exercise_text[lang])
    if lesson.hidden:
        lines.append("")
        lines.append(ui["hidden_kinds"])
        lines.extend(f"- {kind.name[lang]}" for kind in lesson.hidden)
    lines.append("")
    lines.append(ui["start"].format(n=lesson.number))
    return "\n".join(lines)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:,.4g}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def render_costs(costs: dict, lang: str) -> list[str]:
    ui = _UI[lang]
    lines = [f"== {ui['costs']} ==", f"  {ui['bytes']}:"]
    for level, n in costs["bytes"].items():
        lines.append(f"    {level:<26} {n:>16,} B")
    if costs["pipes"]:
        lines.append(f"  {ui['pipes']}:")
        for pipe, p in costs["pipes"].items():
            lines.append(f"    {pipe:<8} {p['busy_us']:>12,.3f} us  {p['cores']:>3} cores  {100 * p['share']:>6.1f} %")
    lines.append(f"  {ui['util']}:")
    for key, value in costs["utilisation"].items():
        if isinstance(value, dict):
            shown = ", ".join(f"{k}={_fmt(v)}" for k, v in value.items() if v)
            lines.append(f"    {key:<22} {shown or '-'}")
        else:
            lines.append(f"    {key:<22} {_fmt(value)}")
    return lines


def render_hidden(lesson: Lesson, result: GradeResult, lang: str) -> list[str]:
    """Each hidden case kind and how it went (a kind the submission did not get to: not run)."""
    ui = _UI[lang]
    said = {h.kind: h.passed for h in result.hidden_in.get(lang, [])}
    lines = [f"== {ui['hidden']} =="]
    for kind in lesson.hidden:
        state = said.get(kind.id)
        mark = "----" if state is None else ("PASS" if state else "FAIL")
        word = ui["not_run"] if state is None else (ui["passed"] if state else ui["failed"])
        lines.append(f"[{mark}] {kind.name[lang]} ({word})")
    return lines


def render_figures(figures: dict, lang: str) -> list[str]:
    """The objective's figures, yours beside the reference solution's."""
    from .costs import FIGURES, figure_text

    ui = _UI[lang]
    at = 0 if lang == "en" else 1
    yours, ref = figures.get("yours") or {}, figures.get("reference") or {}
    rows = [
        (
            FIGURES[k].label[at],
            figure_text(yours.get(k), FIGURES[k].unit),
            figure_text(ref.get(k), FIGURES[k].unit),
            ui[FIGURES[k].better],
        )
        for k in yours
        if k in FIGURES
    ]
    width = max([len(ui["figure"])] + [len(r[0]) for r in rows])
    lines = [f"== {ui['figures']} ==", f"  {ui['figure']:<{width}}  {ui['yours']:>16}  {ui['reference']:>16}"]
    lines.extend(f"  {label:<{width}}  {mine:>16}  {theirs:>16}  ({better})" for label, mine, theirs, better in rows)
    return lines


def render_result(lesson: Lesson, result: GradeResult, lang: str) -> str:
    ui = _UI[lang]
    en, zh = VERDICTS.get(result.verdict, (result.verdict, result.verdict))
    sep = "：" if lang == "zh" else ": "
    lines = [
        lesson_heading(lesson, lang),
        f"{ui['objective']}{sep}{lesson.objective.text[lang]}",
        f"{ui['verdict']}: {result.verdict} ({zh if lang == 'zh' else en})   {ui['score']} {result.score}/100",
        "",
    ]
    for c in result.criteria:
        mark = "PASS" if c.passed else ("----" if c.passed is None else "FAIL")
        lines.append(f"[{mark}] {c.title}")
        if c.passed is None:
            continue
        if c.yours or c.expected:
            for label, text in ((ui["yours"], c.yours), (ui["expected"], c.expected)):
                first, *rest = str(text).splitlines() or [""]
                lines.append(f"       {label}: {first}")
                lines.extend(f"         {line}" for line in rest)
        if c.detail:
            lines.extend("       " + line for line in c.detail.splitlines())
        if not c.passed and c.hint:
            lines.append(f"       {ui['hint']}: {c.hint}")
    if lesson.hidden and result.verdict != "NO_SUBMISSION":
        lines.append("")
        lines.extend(render_hidden(lesson, result, lang))
    if result.figures:
        lines.append("")
        lines.extend(render_figures(result.figures, lang))
    if result.predictions:
        lines.append("")
        lines.append(f"== {ui['predictions']} ==")
        for p in result.predictions:
            lines.append(f"- {p.question}")
            if p.correct is None:
                lines.append(f"    {ui['unanswered']}")
                continue
            mark = ui["right"] if p.correct else ui["wrong"]
            lines.append(f"    {ui['yours']}: {p.yours}; {ui['simulator']}: {p.answer} ({mark})")
            lines.append(f"    {p.explanation}")
    if result.verdict not in ("PASS", "FAIL", "NOT_ON_DEVICE"):
        lines.append("")
        lines.extend(result.messages)
    if result.costs:
        lines.append("")
        lines.extend(render_costs(result.costs, lang))
    if result.stdout.strip():
        lines.append("")
        lines.append(f"== {ui['printed']} ==")
        lines.append(result.stdout.rstrip())
    return "\n".join(lines)
