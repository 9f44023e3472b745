; C tags. Capture convention: repomap/queries/README.md
; A function's name sits at the bottom of its declarator chain: `char **f(void)` is
; pointer_declarator > pointer_declarator > function_declarator > identifier.

; --- definitions ---------------------------------------------------------

(function_definition
  declarator: [(function_declarator declarator: (identifier) @name)
               (pointer_declarator
                 declarator: (function_declarator declarator: (identifier) @name))
               (pointer_declarator
                 declarator: (pointer_declarator
                   declarator: (function_declarator declarator: (identifier) @name)))
               (pointer_declarator
                 declarator: (pointer_declarator
                   declarator: (pointer_declarator
                     declarator: (function_declarator declarator: (identifier) @name))))
               ; `int (*get_handler(void))(int)`: returns a function pointer
               (function_declarator
                 declarator: (parenthesized_declarator
                   (pointer_declarator
                     declarator: (function_declarator declarator: (identifier) @name))))]
  ) @definition.function

; `struct buffer { … };` (only with a body: `struct buffer *b` is a use)
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct

(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct

(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum

; `typedef struct { … } point_t;`: the typedef name is the struct's only name
(type_definition
  type: [(struct_specifier !name body: (field_declaration_list))
         (union_specifier !name body: (field_declaration_list))]
  declarator: (type_identifier) @name) @definition.struct

(type_definition
  type: (enum_specifier !name body: (enumerator_list))
  declarator: (type_identifier) @name) @definition.enum

; `typedef struct node { … } node_t;`: the struct is tagged above; the alias is just
; its declarator, so that the struct does not nest inside the typedef
(type_definition
  type: [(struct_specifier name: (_) body: (_))
         (union_specifier name: (_) body: (_))
         (enum_specifier name: (_) body: (_))]
  declarator: (type_identifier) @name @definition.type)

; `typedef unsigned long ulong;`, `typedef struct opaque *handle_t;`, `typedef int (*cb_t)(int);`
(type_definition
  type: [(primitive_type) (type_identifier) (sized_type_specifier) (macro_type_specifier)
         (struct_specifier !body) (union_specifier !body) (enum_specifier !body)]
  declarator: [(type_identifier) @name
               (pointer_declarator declarator: (type_identifier) @name)
               (function_declarator
                 declarator: (parenthesized_declarator
                   (pointer_declarator declarator: (type_identifier) @name)))]) @definition.type

; `#define MAX_ITEMS 16`, `#define ERR_IO -5`: the constants a report quotes; function-like
; macros are places of their own
(preproc_def name: (identifier) @name) @definition.constant

(preproc_function_def name: (identifier) @name) @definition.function

; enum members (`ERR_TIMEOUT` in `enum err { … }`), qualified by their enum when it is named
(enumerator name: (identifier) @name) @definition.constant

; --- references ----------------------------------------------------------

; calls, minus the C library's (`printf`, `malloc`, `strlen`, …)
((call_expression function: (identifier) @reference)
  (#not-match? @reference "^(printf|fprintf|sprintf|snprintf|vprintf|vfprintf|vsnprintf|puts|fputs|putchar|scanf|sscanf|fopen|fclose|fread|fwrite|fgets|fflush|malloc|calloc|realloc|free|memcpy|memmove|memset|memcmp|strlen|strcmp|strncmp|strcpy|strncpy|strcat|strncat|strchr|strrchr|strstr|strdup|atoi|atol|strtol|strtoul|strtod|exit|abort|assert|sizeof)$"))

; `buf->len`, `p.x`, `obj->ops->run()`
(field_expression field: (field_identifier) @reference)

; typedef names in declarations, parameters, fields, return types, casts, sizeof
(_ type: (type_identifier) @reference)

; `struct buffer *b`, `enum color c`
(struct_specifier name: (type_identifier) @reference !body)
(union_specifier name: (type_identifier) @reference !body)
(enum_specifier name: (type_identifier) @reference !body)
