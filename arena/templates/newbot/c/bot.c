/* {{name}}: an arena bot in C over the stdio transport (protocol/SPEC.md section 14.3):
 * one JSON message per line on stdin and stdout; C99 and its standard library only.
 * It draws from the stock, never melds, and discards the card it drew (or, after taking the
 * discard pile's top card, the first other card). Change decide_draw and decide_play.
 * Build: cc -O2 -o bot bot.c    Logs go to stderr: stdout is the protocol.
 */
#define _POSIX_C_SOURCE 200809L /* getline */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a small JSON reader: enough for the referee's messages ---------------------------- */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct J {
    int type;
    double num;          /* J_NUM, and J_BOOL as 0/1 */
    char *str;           /* J_STR */
    char *key;           /* set when this value is an object's member */
    struct J *child;     /* J_ARR, J_OBJ: the first element or member */
    struct J *next;      /* the next element or member */
} J;

static const char *p;    /* the parser's position in the line */

static void skip(void) { while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++; }

static J *node(int type) {
    J *j = calloc(1, sizeof *j);
    if (!j) { fputs("out of memory\n", stderr); exit(1); }
    j->type = type;
    return j;
}

static char *parse_string(void) {   /* at the opening quote; \u escapes become '?' (cards are ASCII) */
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    if (!s) exit(1);
    p++;
    while (*p && *p != '"') {
        char c = *p++;
        if (c == '\\') {
            c = *p++;
            if (c == 'n') c = '\n'; else if (c == 't') c = '\t'; else if (c == 'r') c = '\r';
            else if (c == 'b') c = '\b'; else if (c == 'f') c = '\f';
            else if (c == 'u') { int k; for (k = 0; k < 4 && *p; k++) p++; c = '?'; }
            else if (c == '\0') { p--; break; }
        }
        if (n + 2 > cap) { cap *= 2; s = realloc(s, cap); if (!s) exit(1); }
        s[n++] = c;
    }
    if (*p == '"') p++;
    s[n] = '\0';
    return s;
}

static J *parse_value(void) {
    J *j, **tail;
    skip();
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        j = node(*p == '{' ? J_OBJ : J_ARR);
        tail = &j->child;
        p++;
        skip();
        while (*p && *p != close) {
            char *key = NULL;
            J *v;
            if (j->type == J_OBJ) {
                if (*p != '"') return NULL;
                key = parse_string();
                skip();
                if (*p++ != ':') return NULL;
            }
            v = parse_value();
            if (!v) return NULL;
            v->key = key;
            *tail = v;
            tail = &v->next;
            skip();
            if (*p == ',') { p++; skip(); }
        }
        if (*p != close) return NULL;
        p++;
        return j;
    }
    if (*p == '"') { j = node(J_STR); j->str = parse_string(); return j; }
    if (!strncmp(p, "true", 4)) { p += 4; j = node(J_BOOL); j->num = 1; return j; }
    if (!strncmp(p, "false", 5)) { p += 5; return node(J_BOOL); }
    if (!strncmp(p, "null", 4)) { p += 4; return node(J_NULL); }
    j = node(J_NUM);
    {
        char *end;
        j->num = strtod(p, &end);
        if (end == p) return NULL;
        p = end;
    }
    return j;
}

static void free_json(J *j) {
    while (j) {
        J *next = j->next;
        free_json(j->child);
        free(j->str);
        free(j->key);
        free(j);
        j = next;
    }
}

static J *get(const J *obj, const char *key) {   /* an object's member, or NULL */
    const J *m;
    if (!obj || obj->type != J_OBJ) return NULL;
    for (m = obj->child; m; m = m->next) if (!strcmp(m->key, key)) return (J *)m;
    return NULL;
}

static const char *str_of(const J *j) { return j && j->type == J_STR ? j->str : NULL; }

static int contains(const J *arr, const char *s) {
    const J *e;
    for (e = arr ? arr->child : NULL; e; e = e->next) if (str_of(e) && !strcmp(e->str, s)) return 1;
    return 0;
}

static void put_string(const char *s) {           /* a JSON string on stdout */
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') { putchar('\\'); putchar(*s); }
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

/* ---- the bot ------------------------------------------------------------------------------ */

static const char *decide_draw(const J *obs) {
    const J *legal = get(obs, "legal_draws");
    if (contains(legal, "stock") || !legal || !legal->child) return "stock";
    return str_of(legal->child);
}

static const char *decide_play(const J *obs) {    /* the discard; no table play */
    const char *drawn = str_of(get(obs, "drawn"));
    const J *took = get(obs, "took_discard");
    int took_discard = took && took->num != 0;
    const J *hand = get(obs, "hand"), *c;
    if (drawn && !took_discard) return drawn;
    /* the card taken from the discard pile (or an equal one) may not be discarded this turn */
    for (c = hand ? hand->child : NULL; c; c = c->next)
        if (str_of(c) && !(drawn && !strcmp(c->str, drawn))) return c->str;
    return drawn;
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    int welcomed = 0;
    printf("{\"v\": 1, \"type\": \"hello\", \"name\": ");
    put_string("{{name}}");
    printf(", \"versions\": [1]}\n");
    fflush(stdout);                                  /* after every line, or the referee waits */
    while (getline(&line, &cap, stdin) != -1) {
        const char *type;
        J *msg;
        p = line;
        msg = parse_value();
        if (!msg) { fprintf(stderr, "not JSON: %.80s\n", line); continue; }
        type = str_of(get(msg, "type"));
        if (!type) type = "";
        if (!strcmp(type, "welcome")) welcomed = 1;
        else if (!strcmp(type, "error")) {
            fprintf(stderr, "error %s: %s\n", str_of(get(msg, "kind")), str_of(get(msg, "reason")));
            if (!welcomed) return 1;                 /* version or token refused */
        } else if (!strcmp(type, "shutdown")) {
            free_json(msg);
            break;
        } else if (!strcmp(type, "request")) {
            const char *decision = str_of(get(msg, "decision"));
            const J *obs = get(msg, "observation");
            int draw = decision && !strcmp(decision, "draw");
            printf("{\"v\": 1, \"type\": \"%s\", \"game\": ", draw ? "draw" : "play");
            put_string(str_of(get(msg, "game")) ? str_of(get(msg, "game")) : "");
            printf(", \"seq\": %.0f, ", get(msg, "seq") ? get(msg, "seq")->num : 0.0);
            if (draw) { printf("\"source\": "); put_string(decide_draw(obs)); }
            else { printf("\"actions\": [], \"discard\": "); put_string(decide_play(obs)); }
            printf("}\n");
            fflush(stdout);
        }                                            /* new_game, event, game_over: nothing to do */
        free_json(msg);
    }
    free(line);
    return 0;
}
