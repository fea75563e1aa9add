# cmake --install: the drift executable, the engine's headers and a CMake package, so that a
# plugin is built out of tree with find_package(drift CONFIG) (docs/plugins.md).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DRIFT_INSTALL_INCLUDE_DIR ${CMAKE_INSTALL_INCLUDEDIR}/drift)
set(DRIFT_INSTALL_BIN_DIR ${CMAKE_INSTALL_BINDIR})
set(DRIFT_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/drift)

# A LibTorch outside the system's paths (a CUDA build through CMAKE_PREFIX_PATH) stays found.
set_target_properties(drift PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS drift RUNTIME DESTINATION ${DRIFT_INSTALL_BIN_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/ DESTINATION ${DRIFT_INSTALL_INCLUDE_DIR}/engine
        FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/generated/engine/compose/plugin_build.hpp
        DESTINATION ${DRIFT_INSTALL_INCLUDE_DIR}/engine/compose)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/driftConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/driftConfig.cmake
                              INSTALL_DESTINATION ${DRIFT_INSTALL_CMAKE_DIR}
                              PATH_VARS DRIFT_INSTALL_INCLUDE_DIR DRIFT_INSTALL_BIN_DIR)
# A plugin must be built against exactly this drift (its build text says so at load time).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/driftConfigVersion.cmake COMPATIBILITY ExactVersion)
install(FILES ${PROJECT_BINARY_DIR}/driftConfig.cmake ${PROJECT_BINARY_DIR}/driftConfigVersion.cmake
        DESTINATION ${DRIFT_INSTALL_CMAKE_DIR})

# The shipped scenarios and the examples (the plugin, the TorchScript and exported models), so
# that an installed drift (the container image) has what the docs run.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/drift/scenarios)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/drift/examples)
