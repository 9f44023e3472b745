; Python tags. Capture convention: repomap/queries/README.md

(class_definition name: (identifier) @name) @definition.class

(function_definition name: (identifier) @name) @definition.function

; module-level constants and aliases (REPR_OUTPUT_SIZE = 20)
(module (assignment left: (identifier) @name) @definition.constant)

; Bare names: calls, bases, decorators, types, arguments, raised and caught exceptions.
; Builtins are left out: `super()` or `len()` say nothing about which file is meant.
([
  (call function: (identifier) @reference)
  (class_definition superclasses: (argument_list (identifier) @reference))
  (decorator (identifier) @reference)
  (type (identifier) @reference)
  (except_clause (identifier) @reference)
  (raise_statement (identifier) @reference)
  (keyword_argument value: (identifier) @reference)
  (argument_list (identifier) @reference)
 ]
 (#not-match? @reference "^(super|len|isinstance|issubclass|str|int|float|bool|bytes|bytearray|dict|list|tuple|set|frozenset|type|object|print|range|enumerate|zip|map|filter|sorted|reversed|min|max|sum|any|all|getattr|setattr|hasattr|delattr|iter|next|open|repr|hash|id|callable|vars|dir|format|round|abs|divmod|pow|chr|ord|memoryview|property|staticmethod|classmethod|self|cls|Exception|BaseException|ValueError|TypeError|KeyError|IndexError|AttributeError|RuntimeError|NotImplementedError|NotImplemented|StopIteration|None|True|False)$"))

; Member access and calls through it (`qs._fetch_all()`, `models.CharField`).
(attribute attribute: (identifier) @reference)

; Imported names.
(import_from_statement name: (dotted_name (identifier) @reference))
(import_from_statement name: (aliased_import name: (dotted_name (identifier) @reference)))
