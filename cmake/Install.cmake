# Install rules (issue 34; docs/install.md says what goes where): `cmake --install build --prefix P`
# and the Debian package (cmake/Packaging.cmake) install the same tree.
#   bin/wattline
#   share/applications/wattline.desktop, share/icons/hicolor/scalable/apps/wattline.svg
#   share/mime/packages/wattline.xml       the file type application/x-wattline-run
#   share/man/man1/wattline*.1             from target wattline_docs (cmake/ManPages.cmake)
#   share/bash-completion/completions/wattline, share/zsh/vendor-completions/_wattline
#   share/wattline/samples/                the bundled sample runs
#   share/doc/wattline/                    README.md, LICENSE, copyright, docs/ (with docs/img)
# Included from the top CMakeLists.txt after the wattline target and cmake/ManPages.cmake.
include(GNUInstallDirs)

install(TARGETS wattline RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(WATTLINE_RESOURCES ${PROJECT_SOURCE_DIR}/resources)
install(FILES ${WATTLINE_RESOURCES}/icons/wattline.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
install(FILES ${WATTLINE_RESOURCES}/desktop/wattline.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${WATTLINE_RESOURCES}/desktop/wattline.xml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages)

# Man pages and completion: what `wattline --generate-docs` wrote into the build tree (part of the
# default build; a sanitizer build does not make them and installs nothing).
install(DIRECTORY ${WATTLINE_DOCS_DIR}/man/man1/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
        FILES_MATCHING PATTERN "*.1")
install(FILES ${WATTLINE_DOCS_DIR}/completion/wattline.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME wattline)
install(FILES ${WATTLINE_DOCS_DIR}/completion/_wattline
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)

install(DIRECTORY ${WATTLINE_RESOURCES}/samples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/wattline/samples)

# README.md beside docs/, as in the source tree, so that its links to docs/*.md and the docs'
# links to img/ resolve.
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
              ${WATTLINE_RESOURCES}/debian/copyright
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png" PATTERN "*.svg")
