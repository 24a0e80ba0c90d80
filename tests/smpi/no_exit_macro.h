/* Forced into iso-bench's sources after SMPI's smpi_helpers.h: that header
   defines exit(x) as a macro, which breaks CLI11's CLI::App::exit(error, out,
   err). iso-bench calls no exit() of its own: its ranks return from main. */
#undef exit
