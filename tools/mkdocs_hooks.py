"""MkDocs hooks (mkdocs.yml ``hooks``): the notebooks of notebooks/ become pages of the site,
read in place from the repository's one copy, with the outputs stored in them."""

import pathlib

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

ROOT = pathlib.Path(__file__).resolve().parents[1]


@event_priority(100)  # before mkdocs-jupyter's on_files, which makes pages of .ipynb files
def on_files(files, config):
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        files.append(File(f"notebooks/{notebook.name}", src_dir=str(ROOT),
                          dest_dir=config.site_dir,
                          use_directory_urls=config.use_directory_urls))
    return files
