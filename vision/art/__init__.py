"""Card art: the built-in proxy renderer, art packs (one image per face) and print-and-play sheets.

`proxy.render_face` draws any face of any catalog from its data; `pack` stores and validates a
folder of face images with its `pack.json` manifest (proxy, enrolled or imported art);
`printsheet` lays a whole deck out on duplex pages at true size for printing.
"""
