# The Debian package (issue 34; docs/install.md): `cpack -G DEB` in the build folder makes
# wattline_VERSION_ARCH.deb of what cmake/Install.cmake installs, under /usr.
#
# Depends: dpkg-shlibdeps (CPACK_DEBIAN_PACKAGE_SHLIBDEPS) reads the libraries the stripped binary
# links and names the Debian packages that hold them, with the versions their symbols need, as a
# Debian package's ${shlibs:Depends} would; a hand-kept list would drift from the build. It needs
# dpkg-dev (scripts/setup-debian.sh). Added by hand: what the binary loads at run time and so
# dpkg-shlibdeps cannot see, Qt's platform plugins (the GUI's xcb and offscreen).
# The mime, desktop and icon caches are refreshed by the dpkg triggers of shared-mime-info,
# desktop-file-utils and hicolor-icon-theme; the package needs no maintainer scripts.
set(CPACK_PACKAGE_NAME wattline)
set(CPACK_PACKAGE_VENDOR "Wattline")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "Wattline maintainers <maintainers@users.noreply.a-seed-4bb2e578.example>")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)  # the build's debug info would make the package ~10x larger
set(CPACK_GENERATOR DEB)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # wattline_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "qt6-qpa-plugins")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "shared-mime-info, desktop-file-utils, hicolor-icon-theme")
# The extended description: CPack indents its lines after the summary for the control file.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "${PROJECT_DESCRIPTION}
Wattline opens the GPU telemetry of a large-model training run (power, temperature, clocks,
utilization, throttle reasons) together with the kernel traces of every rank on one synchronized,
zoomable time axis, so that thermal throttling, its causes and its cost can be seen and measured.
A headless command line imports profiler and telemetry files, simulates runs, analyses, compares
and exports figures. License: GPL-3.0-or-later.")
include(CPack)
