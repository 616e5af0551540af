"""A branch as a comic: its pages drawn, and written as PNG, PDF or CBZ (docs/EXPORTS.md).

The layout is ``journal.pages``'s pure projection of the path; this package reads the
path and the panel files, draws each page with Pillow (SVG panels rasterised by
CairoSVG), and writes the files so that the same node and lettering give the same bytes.
"""
