"""AscendSim lessons: prose, scenarios, exercises and their graders (the curriculum is built on the engine)."""
