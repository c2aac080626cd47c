; TypeScript's parameters (codeintel/scopes.py); the rest as JavaScript's (javascript.locals.scm).
(required_parameter pattern: (identifier) @local.definition)
(optional_parameter pattern: (identifier) @local.definition)
