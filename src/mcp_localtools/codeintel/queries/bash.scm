; Tags for Bash (the grammar's wheel ships none): functions, and commands as calls.
(function_definition name: (word) @name) @definition.function

(command name: (command_name (word) @name)) @reference.call
