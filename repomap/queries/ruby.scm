; Ruby tags. Capture convention: repomap/queries/README.md

; --- definitions ---------------------------------------------------------

(class name: (constant) @name) @definition.class

; `class Shop::Cart` → `Shop.Cart`; deeper paths keep only the last name
(class name: (scope_resolution scope: (constant) @scope name: (constant) @name)) @definition.class

(class name: (scope_resolution scope: (scope_resolution) name: (constant) @name)) @definition.class

(module name: (constant) @name) @definition.module

(module name: (scope_resolution scope: (constant) @scope name: (constant) @name)) @definition.module

(module name: (scope_resolution scope: (scope_resolution) name: (constant) @name)) @definition.module

; `def x` (a method inside a class or module, a function at top level)
(method name: [(identifier) (setter) (operator)] @name) @definition.function

; `def self.x` (qualified by the enclosing class) and `def Foo.x`
(singleton_method object: (self) name: [(identifier) (setter) (operator)] @name) @definition.method

(singleton_method
  object: (constant) @scope
  name: [(identifier) (setter) (operator)] @name) @definition.method

; --- references ----------------------------------------------------------

; method calls (`Logger.info`, `cart.add`, `format_price(x)`), minus the
; everyday Kernel/Module calls
((call method: (identifier) @reference)
  (#not-match? @reference "^(require|require_relative|load|include|extend|prepend|attr_reader|attr_writer|attr_accessor|private|protected|public|module_function|private_constant|puts|print|p|pp|raise|new|lambda|proc|loop)$"))

; constants: receivers, superclasses, mixins, arguments, rescued exceptions, paths
(call receiver: (constant) @reference)

(superclass (constant) @reference)

(argument_list (constant) @reference)

(exceptions (constant) @reference)

(scope_resolution scope: (constant) @reference)

(scope_resolution name: (constant) @reference)
