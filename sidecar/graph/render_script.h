/* render_script.h - the JavaScript and CSS of the SVG (render_script.c).
 * The script relies on render.c writing frames in depth-first pre-order. */
#ifndef FS_RENDER_SCRIPT_H
#define FS_RENDER_SCRIPT_H

extern const char render_js[];
extern const char render_css[];

#endif
