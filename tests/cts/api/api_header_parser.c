// A small parser of weft's public headers (see api_header_parser.h).
#include "api_header_parser.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

typedef enum token_kind_e {
  TOKEN_END = 0,
  TOKEN_IDENTIFIER = 1,
  TOKEN_NUMBER = 2,
  TOKEN_STRING = 3,
  TOKEN_PUNCTUATION = 4,
} token_kind_t;

typedef struct token_t {
  token_kind_t kind;
  char text[API_MAX_NAME];
  int line;
} token_t;

#define DOC_CAPACITY 4096

typedef struct lexer_t {
  const char* p;
  int line;
  // Only whitespace seen so far on the current line.
  bool at_line_start;
  // The comment block most recently read at the start of lines, one space
  // between lines, and the line it ended on (0: none).
  char doc[DOC_CAPACITY];
  int doc_last_line;
} lexer_t;

// Appends comment text [begin, end) to the doc block, starting a new block
// unless the comment continues the one that ended on the line above.
static void lexer_add_doc(lexer_t* lexer, int first_line, int last_line,
                          const char* begin, const char* end) {
  if (lexer->doc_last_line == 0 || lexer->doc_last_line != first_line - 1) {
    lexer->doc[0] = '\0';
  }
  while (begin < end && isspace((unsigned char)*begin)) ++begin;
  while (end > begin && isspace((unsigned char)end[-1])) --end;
  size_t used = strlen(lexer->doc);
  size_t length = (size_t)(end - begin);
  if (used + length + 2 < DOC_CAPACITY) {
    if (used > 0) lexer->doc[used++] = ' ';
    memcpy(lexer->doc + used, begin, length);
    lexer->doc[used + length] = '\0';
  }
  lexer->doc_last_line = last_line;
}

// Skips a preprocessor line and its backslash continuations.
static void lexer_skip_directive(lexer_t* lexer) {
  while (*lexer->p && *lexer->p != '\n') {
    if (lexer->p[0] == '\\' && lexer->p[1] == '\n') {
      lexer->p += 2;
      ++lexer->line;
    } else {
      ++lexer->p;
    }
  }
}

// Reads the next token, skipping whitespace, comments (recording doc
// blocks) and preprocessor lines.
static void lexer_next(lexer_t* lexer, token_t* token) {
  memset(token, 0, sizeof(*token));
  for (;;) {
    const char* p = lexer->p;
    if (*p == '\0') {
      token->kind = TOKEN_END;
      token->line = lexer->line;
      return;
    }
    if (*p == '\n') {
      ++lexer->line;
      lexer->at_line_start = true;
      ++lexer->p;
    } else if (isspace((unsigned char)*p)) {
      ++lexer->p;
    } else if (*p == '#' && lexer->at_line_start) {
      lexer_skip_directive(lexer);
    } else if (p[0] == '/' && p[1] == '/') {
      const char* end = strchr(p, '\n');
      if (!end) end = p + strlen(p);
      if (lexer->at_line_start) {
        lexer_add_doc(lexer, lexer->line, lexer->line, p + 2, end);
      }
      lexer->p = end;
    } else if (p[0] == '/' && p[1] == '*') {
      int first_line = lexer->line;
      const char* end = strstr(p + 2, "*/");
      const char* stop = end ? end : p + strlen(p);
      for (const char* q = p; q < stop; ++q) {
        if (*q == '\n') ++lexer->line;
      }
      if (lexer->at_line_start) {
        lexer_add_doc(lexer, first_line, lexer->line, p + 2, stop);
      }
      lexer->p = end ? end + 2 : stop;
    } else {
      break;
    }
  }
  const char* p = lexer->p;
  lexer->at_line_start = false;
  token->line = lexer->line;
  size_t length = 1;
  if (isalpha((unsigned char)*p) || *p == '_') {
    token->kind = TOKEN_IDENTIFIER;
    while (isalnum((unsigned char)p[length]) || p[length] == '_') ++length;
  } else if (isdigit((unsigned char)*p)) {
    token->kind = TOKEN_NUMBER;
    while (isalnum((unsigned char)p[length]) || p[length] == '.') ++length;
  } else if (*p == '"' || *p == '\'') {
    token->kind = TOKEN_STRING;
    while (p[length] && p[length] != *p && p[length] != '\n') {
      length += p[length] == '\\' && p[length + 1] ? 2 : 1;
    }
    if (p[length] == *p) ++length;
  } else if (strncmp(p, "...", 3) == 0) {
    token->kind = TOKEN_PUNCTUATION;
    length = 3;
  } else {
    token->kind = TOKEN_PUNCTUATION;
  }
  size_t copied =
      length < sizeof(token->text) ? length : sizeof(token->text) - 1;
  memcpy(token->text, p, copied);
  token->text[copied] = '\0';
  lexer->p += length;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

typedef struct statement_t {
  token_t* tokens;
  size_t count;
  size_t capacity;
  // The doc comment directly above the statement's first line ("" if none).
  char doc[DOC_CAPACITY];
  int line;
} statement_t;

static bool token_is(const token_t* token, const char* text) {
  return strcmp(token->text, text) == 0;
}

static bool statement_push(statement_t* statement, const token_t* token) {
  if (statement->count == statement->capacity) {
    size_t capacity = statement->capacity ? statement->capacity * 2 : 64;
    token_t* tokens = realloc(statement->tokens, capacity * sizeof(*tokens));
    if (!tokens) return false;
    statement->tokens = tokens;
    statement->capacity = capacity;
  }
  statement->tokens[statement->count++] = *token;
  return true;
}

static void format_error(char* error, size_t capacity, const char* format,
                         ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(error, capacity, format, args);
  va_end(args);
}

// Joins tokens [begin, end) into C type text ("const weft_fence_t* const*",
// "const uint32_t[3]"), leaving out token |skip| (the parameter's name).
static void join_tokens(const token_t* tokens, size_t begin, size_t end,
                        size_t skip, char* out, size_t capacity) {
  size_t used = 0;
  out[0] = '\0';
  const token_t* previous = NULL;
  for (size_t i = begin; i < end; ++i) {
    if (i == skip) continue;
    const token_t* token = &tokens[i];
    bool word = token->kind == TOKEN_IDENTIFIER || token->kind == TOKEN_NUMBER;
    bool space = false;
    if (previous) {
      bool previous_word =
          previous->kind == TOKEN_IDENTIFIER || previous->kind == TOKEN_NUMBER;
      space = (previous_word && word) ||
              (token_is(previous, "*") && token->kind == TOKEN_IDENTIFIER);
      if (token_is(previous, "[") || token_is(token, "]")) space = false;
    }
    int written = snprintf(out + used, capacity - used, "%s%s",
                           space ? " " : "", token->text);
    if (written < 0 || (size_t)written >= capacity - used) break;
    used += (size_t)written;
    previous = token;
  }
}

static bool ends_with(const char* text, const char* suffix) {
  size_t length = strlen(text);
  size_t suffix_length = strlen(suffix);
  return length >= suffix_length &&
         strcmp(text + length - suffix_length, suffix) == 0;
}

// The type without a leading "const ", for matching struct names.
static const char* skip_const(const char* type) {
  return strncmp(type, "const ", 6) == 0 ? type + 6 : type;
}

// True when |doc| grants "|name| may be NULL" without a following " when".
static bool doc_says_nullable(const char* doc, const char* name) {
  char needle[API_MAX_NAME + 32];
  snprintf(needle, sizeof(needle), "|%s| may be NULL", name);
  for (const char* hit = strstr(doc, needle); hit;
       hit = strstr(hit + 1, needle)) {
    if (strncmp(hit + strlen(needle), " when", 5) != 0) return true;
  }
  return false;
}

// Parses the tokens [begin, end) of one parameter.
static bool parse_param(const statement_t* statement, size_t begin, size_t end,
                        api_param_t* param, char* error,
                        size_t error_capacity) {
  const token_t* tokens = statement->tokens;
  memset(param, 0, sizeof(*param));
  if (end - begin == 1 && token_is(&tokens[begin], "...")) {
    snprintf(param->name, sizeof(param->name), "...");
    snprintf(param->type, sizeof(param->type), "...");
    param->is_varargs = true;
    return true;
  }
  // The name: inside "(*name)" for a function pointer declarator, else the
  // identifier before the first '[', else the last token.
  size_t name_index = end;
  for (size_t i = begin; i + 2 < end; ++i) {
    if (token_is(&tokens[i], "(") && token_is(&tokens[i + 1], "*") &&
        tokens[i + 2].kind == TOKEN_IDENTIFIER) {
      name_index = i + 2;
      break;
    }
  }
  if (name_index == end) {
    for (size_t i = begin; i < end; ++i) {
      if (token_is(&tokens[i], "[")) {
        name_index = i - 1;
        break;
      }
    }
  }
  if (name_index == end) name_index = end - 1;
  if (name_index < begin || name_index >= end ||
      tokens[name_index].kind != TOKEN_IDENTIFIER || name_index == begin) {
    format_error(error, error_capacity,
                 "line %d: a parameter without a name or type",
                 tokens[begin].line);
    return false;
  }
  snprintf(param->name, sizeof(param->name), "%s", tokens[name_index].text);
  join_tokens(tokens, begin, end, name_index, param->type, sizeof(param->type));
  const char* type = param->type;
  param->is_pointer =
      strchr(type, '*') || strchr(type, '[') || ends_with(type, "_fn_t");
  if (!param->is_pointer) {
    const char* base = skip_const(type);
    param->is_semaphore_list = strcmp(base, "weft_semaphore_list_t") == 0;
    param->is_binding_table = strcmp(base, "weft_binding_table_t") == 0;
    param->is_allocator = strcmp(base, "weft_allocator_t") == 0;
  }
  param->is_nullable = doc_says_nullable(statement->doc, param->name);
  param->is_out = strncmp(param->name, "out_", 4) == 0;
  return true;
}

static bool list_push(api_function_list_t* list, const api_function_t* fn) {
  if (list->count == list->capacity) {
    uint32_t capacity = list->capacity ? list->capacity * 2 : 64;
    api_function_t* functions =
        realloc(list->functions, capacity * sizeof(*functions));
    if (!functions) return false;
    list->functions = functions;
    list->capacity = capacity;
  }
  list->functions[list->count++] = *fn;
  return true;
}

// Turns one statement into a function (or skips it: typedefs, statics,
// definitions with a body, declarations without parameters).
static bool parse_statement(const char* header_name,
                            const statement_t* statement,
                            api_function_list_t* list, char* error,
                            size_t error_capacity) {
  const token_t* tokens = statement->tokens;
  size_t count = statement->count;
  if (count == 0) return true;
  if (token_is(&tokens[0], "typedef") || token_is(&tokens[0], "static")) {
    return true;
  }
  size_t open = count;
  for (size_t i = 0; i < count; ++i) {
    if (token_is(&tokens[i], "{")) return true;  // struct/enum/union body
    if (open == count && token_is(&tokens[i], "(")) open = i;
  }
  if (open == count) return true;  // a forward declaration
  size_t first = token_is(&tokens[0], "extern") ? 1 : 0;
  if (open <= first + 1 || tokens[open - 1].kind != TOKEN_IDENTIFIER) {
    format_error(error, error_capacity,
                 "%s:%d: cannot find the function name before '('", header_name,
                 statement->line);
    return false;
  }
  api_function_t function;
  memset(&function, 0, sizeof(function));
  snprintf(function.name, sizeof(function.name), "%s", tokens[open - 1].text);
  snprintf(function.header, sizeof(function.header), "%s", header_name);
  function.line = statement->line;
  join_tokens(tokens, first, open - 1, (size_t)-1, function.return_type,
              sizeof(function.return_type));
  // Parameters: split at depth-0 commas up to the matching ')'.
  int depth = 0;
  size_t begin = open + 1;
  size_t close = count;
  for (size_t i = open + 1; i < count && close == count; ++i) {
    const token_t* token = &tokens[i];
    if (token_is(token, "(") || token_is(token, "[")) {
      ++depth;
    } else if ((token_is(token, ")") || token_is(token, "]")) && depth > 0) {
      --depth;
    } else if (token_is(token, ")") || (token_is(token, ",") && depth == 0)) {
      bool only_void = token_is(token, ")") && function.param_count == 0 &&
                       i == begin + 1 && token_is(&tokens[begin], "void");
      if (!only_void && i > begin) {
        if (function.param_count == API_MAX_PARAMS) {
          format_error(error, error_capacity, "%s:%d: %s has too many params",
                       header_name, statement->line, function.name);
          return false;
        }
        if (!parse_param(statement, begin, i,
                         &function.params[function.param_count++], error,
                         error_capacity)) {
          return false;
        }
      }
      begin = i + 1;
      if (token_is(token, ")")) close = i;
    }
  }
  if (close == count) {
    format_error(error, error_capacity,
                 "%s:%d: %s: no ')' closes the "
                 "parameters",
                 header_name, statement->line, function.name);
    return false;
  }
  // After the parameters only __attribute__((...)) and ';' may follow.
  for (size_t i = close + 1; i < count; ++i) {
    if (token_is(&tokens[i], "__attribute__")) {
      int nesting = 0;
      for (++i; i < count; ++i) {
        if (token_is(&tokens[i], "(")) ++nesting;
        if (token_is(&tokens[i], ")") && --nesting == 0) break;
      }
    } else if (!token_is(&tokens[i], ";")) {
      format_error(error, error_capacity,
                   "%s:%d: %s: unexpected '%s' after the parameters",
                   header_name, statement->line, function.name, tokens[i].text);
      return false;
    }
  }
  if (!list_push(list, &function)) {
    format_error(error, error_capacity, "out of memory");
    return false;
  }
  return true;
}

bool api_parse_header_text(const char* header_name, const char* text,
                           api_function_list_t* list, char* error,
                           size_t error_capacity) {
  lexer_t* lexer = calloc(1, sizeof(*lexer));
  statement_t* statement = calloc(1, sizeof(*statement));
  if (!lexer || !statement) {
    free(lexer);
    free(statement);
    format_error(error, error_capacity, "out of memory");
    return false;
  }
  lexer->p = text;
  lexer->line = 1;
  lexer->at_line_start = true;
  bool ok = true;
  int brace_depth = 0;
  token_t token;
  for (lexer_next(lexer, &token); ok && token.kind != TOKEN_END;
       lexer_next(lexer, &token)) {
    if (statement->count == 0) {
      // The '}' closing `extern "C" {` (its opening is dropped below).
      if (token_is(&token, "}") && brace_depth == 0) continue;
      bool directly_below = lexer->doc_last_line == token.line - 1;
      snprintf(statement->doc, sizeof(statement->doc), "%s",
               directly_below ? lexer->doc : "");
      statement->line = token.line;
    }
    // `extern "C" {` opens no statement.
    if (token_is(&token, "{") && statement->count == 2 &&
        token_is(&statement->tokens[0], "extern") &&
        statement->tokens[1].kind == TOKEN_STRING) {
      statement->count = 0;
      continue;
    }
    if (!statement_push(statement, &token)) {
      format_error(error, error_capacity, "out of memory");
      ok = false;
      break;
    }
    bool end = false;
    if (token_is(&token, "{")) {
      ++brace_depth;
    } else if (token_is(&token, "}")) {
      --brace_depth;
      // A static inline function's body ends the statement.
      end = brace_depth == 0 && token_is(&statement->tokens[0], "static");
    } else if (token_is(&token, ";")) {
      end = brace_depth == 0;
    }
    if (end) {
      ok = parse_statement(header_name, statement, list, error, error_capacity);
      statement->count = 0;
    }
  }
  if (ok && statement->count > 0) {
    format_error(error, error_capacity,
                 "%s:%d: a declaration does not end before the end of file",
                 header_name, statement->line);
    ok = false;
  }
  free(statement->tokens);
  free(statement);
  free(lexer);
  return ok;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

static int compare_names(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

static char* read_file(const char* path) {
  FILE* file = fopen(path, "rb");
  if (!file) return NULL;
  char* text = NULL;
  if (fseek(file, 0, SEEK_END) == 0) {
    long length = ftell(file);
    if (length >= 0 && fseek(file, 0, SEEK_SET) == 0) {
      text = malloc((size_t)length + 1);
      if (text && fread(text, 1, (size_t)length, file) != (size_t)length) {
        free(text);
        text = NULL;
      }
      if (text) text[length] = '\0';
    }
  }
  fclose(file);
  return text;
}

// Writes |a| "/" |b| (or |b| alone when |a| is "") into |out|; false when
// it does not fit.
static bool join_path(char* out, size_t capacity, const char* a,
                      const char* b) {
  const int written =
      snprintf(out, capacity, "%s%s%s", a, a[0] ? "/" : "", b);
  return written >= 0 && (size_t)written < capacity;
}

// The names in |path| that end in ".h" (|want_headers|) or are folders
// (not "." or ".."), sorted; false with a message when |path| cannot be
// opened.
static bool list_names(const char* path, bool want_headers, char** names,
                       size_t capacity, size_t* out_count, char* error,
                       size_t error_capacity) {
  *out_count = 0;
  DIR* dir = opendir(path);
  if (!dir) {
    format_error(error, error_capacity, "cannot open %s: %s", path,
                 strerror(errno));
    return false;
  }
  for (struct dirent* entry = readdir(dir); entry && *out_count < capacity;
       entry = readdir(dir)) {
    const char* name = entry->d_name;
    bool wanted = false;
    if (want_headers) {
      // mpi.h is libweft_mpi's (optional; it includes <mpi.h>): its NULL
      // checks are in tests/channel.
      wanted = ends_with(name, ".h") && strcmp(name, "mpi.h") != 0;
    } else if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
      char child[4096];
      struct stat info;
      wanted = join_path(child, sizeof(child), path, name) &&
               stat(child, &info) == 0 && S_ISDIR(info.st_mode);
    }
    if (wanted) {
      names[*out_count] = strdup(name);
      if (names[*out_count]) ++*out_count;
    }
  }
  closedir(dir);
  qsort(names, *out_count, sizeof(names[0]), compare_names);
  return true;
}

// Parses the headers of |root|/|relative| (|relative| "" for |root|
// itself), naming each by its path under |root| ("vm/module.h"), then its
// folders, each the same way; |depth| bounds the recursion.
static bool parse_folder(const char* root, const char* relative, int depth,
                         api_function_list_t* list, size_t* header_count,
                         char* error, size_t error_capacity) {
  char path[4096];
  if (!join_path(path, sizeof(path), root, relative)) {
    format_error(error, error_capacity, "path too long: %s/%s", root,
                 relative);
    return false;
  }
  char* names[256];
  size_t name_count = 0;
  bool ok = list_names(path, true, names, 256, &name_count, error,
                       error_capacity);
  for (size_t i = 0; i < name_count && ok; ++i) {
    char header[512];
    char file[4096];
    char* text = NULL;
    if (join_path(header, sizeof(header), relative, names[i]) &&
        join_path(file, sizeof(file), path, names[i])) {
      text = read_file(file);
    }
    if (!text) {
      format_error(error, error_capacity, "cannot read %s/%s", path,
                   names[i]);
      ok = false;
    } else {
      ok = api_parse_header_text(header, text, list, error, error_capacity);
      ++*header_count;
      free(text);
    }
  }
  for (size_t i = 0; i < name_count; ++i) free(names[i]);
  if (ok && depth > 0) {
    ok = list_names(path, false, names, 256, &name_count, error,
                    error_capacity);
    for (size_t i = 0; i < name_count && ok; ++i) {
      char child[512];
      ok = join_path(child, sizeof(child), relative, names[i]);
      if (!ok) {
        format_error(error, error_capacity, "path too long: %s/%s", path,
                     names[i]);
      } else {
        ok = parse_folder(root, child, depth - 1, list, header_count, error,
                          error_capacity);
      }
    }
    for (size_t i = 0; i < name_count; ++i) free(names[i]);
  }
  return ok;
}

bool api_parse_headers(const char* directory, api_function_list_t* list,
                       char* error, size_t error_capacity) {
  size_t header_count = 0;
  bool ok = parse_folder(directory, "", 4, list, &header_count, error,
                         error_capacity);
  if (ok && header_count == 0) {
    format_error(error, error_capacity, "no headers in %s", directory);
    ok = false;
  }
  return ok;
}

void api_function_list_free(api_function_list_t* list) {
  free(list->functions);
  memset(list, 0, sizeof(*list));
}

const api_function_t* api_function_list_find(const api_function_list_t* list,
                                             const char* name) {
  for (uint32_t i = 0; i < list->count; ++i) {
    if (strcmp(list->functions[i].name, name) == 0) {
      return &list->functions[i];
    }
  }
  return NULL;
}

bool api_function_returns_status(const api_function_t* function) {
  return strcmp(function->return_type, "weft_status_t") == 0;
}
