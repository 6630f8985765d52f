// The loop's fixed limits, named (the limits a user sets, the budgets, are in input.ts).

/** After this many edits refused by the test-file guardrail, the run stops: the model keeps trying to change the tests. */
export const maxGuardrailRefusals = 3;

/** How many times preparing a sandbox claims another host when the one holding it cannot be reached. */
export const maxSandboxPlacements = 3;
