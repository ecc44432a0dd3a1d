# SPDX-License-Identifier: MIT
# Finds ScaLAPACK built for Open MPI (Debian: libscalapack-openmpi-dev, BLACS inside)
# and provides the imported target ScaLAPACK::ScaLAPACK (with its BLAS/LAPACK).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_SCALAPACK QUIET IMPORTED_TARGET scalapack-openmpi)
endif()
include(FindPackageHandleStandardArgs)
if(PC_SCALAPACK_FOUND)
  find_package_handle_standard_args(ScaLAPACK
    REQUIRED_VARS PC_SCALAPACK_LIBRARIES VERSION_VAR PC_SCALAPACK_VERSION)
  if(NOT TARGET ScaLAPACK::ScaLAPACK)
    add_library(ScaLAPACK::ScaLAPACK INTERFACE IMPORTED)
    target_link_libraries(ScaLAPACK::ScaLAPACK INTERFACE PkgConfig::PC_SCALAPACK)
  endif()
else()
  find_library(SCALAPACK_LIBRARY NAMES scalapack-openmpi scalapack)
  find_package(BLAS)
  find_package(LAPACK)
  find_package_handle_standard_args(ScaLAPACK
    REQUIRED_VARS SCALAPACK_LIBRARY LAPACK_FOUND
    REASON_FAILURE_MESSAGE "install libscalapack-openmpi-dev (Debian) or set SCALAPACK_LIBRARY")
  if(ScaLAPACK_FOUND AND NOT TARGET ScaLAPACK::ScaLAPACK)
    add_library(ScaLAPACK::ScaLAPACK INTERFACE IMPORTED)
    target_link_libraries(ScaLAPACK::ScaLAPACK INTERFACE ${SCALAPACK_LIBRARY} LAPACK::LAPACK)
  endif()
endif()
