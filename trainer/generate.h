/* generate.h - `hgtrain generate` (trainer/generate.c). */
#ifndef HG_TRAINER_GENERATE_H
#define HG_TRAINER_GENERATE_H

/* argv[0] is "generate"; returns the process exit status. */
int hg_generate_main(int argc, char **argv);
/* `hgtrain interactive`: generate --input - (argv[0] is "interactive"). */
int hg_interactive_main(int argc, char **argv);

#endif
