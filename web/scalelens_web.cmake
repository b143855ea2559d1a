# Included from src/CMakeLists.txt (after scalelens_lib exists): builds the dashboard in web/ with
# npm + Vite into one self-contained index.html and embeds it into scalelens_lib as a generated
# source in the build folder (web_bundle.cpp). Without node/npm (or with -DSCALELENS_BUILD_WEB=OFF)
# the embedded page is a small fallback that says the interactive UI was not built.
# Also finds cpp-httplib for `scalelens serve`.
option(SCALELENS_BUILD_WEB "Build the web dashboard with npm + Vite (needs node and npm)" ON)
set(SCALELENS_WEB_DIR ${PROJECT_SOURCE_DIR}/web)
set(SCALELENS_WEB_OUT ${PROJECT_BINARY_DIR}/web)
set(SCALELENS_WEB_CPP ${SCALELENS_WEB_OUT}/web_bundle.cpp)
find_program(SCALELENS_NODE node)
find_program(SCALELENS_NPM npm)
set(SCALELENS_WEB_BUILT OFF)
if(SCALELENS_BUILD_WEB AND SCALELENS_NODE AND SCALELENS_NPM)
  set(SCALELENS_WEB_BUILT ON)
  file(GLOB_RECURSE scalelens_web_sources CONFIGURE_DEPENDS ${SCALELENS_WEB_DIR}/src/*)
  add_custom_command(
    OUTPUT ${SCALELENS_WEB_CPP} ${SCALELENS_WEB_OUT}/dist/index.html
    COMMAND ${CMAKE_COMMAND} -DMODE=build -DNPM=${SCALELENS_NPM} -DWEB_DIR=${SCALELENS_WEB_DIR}
            -DOUT_DIR=${SCALELENS_WEB_OUT} -P ${SCALELENS_WEB_DIR}/build_web.cmake
    DEPENDS ${scalelens_web_sources} ${SCALELENS_WEB_DIR}/package.json ${SCALELENS_WEB_DIR}/package-lock.json
            ${SCALELENS_WEB_DIR}/index.html ${SCALELENS_WEB_DIR}/vite.config.ts ${SCALELENS_WEB_DIR}/build_web.cmake
    COMMENT "Building the web dashboard (npm ci when the lock file changed, vite build)"
    VERBATIM)
else()
  if(NOT SCALELENS_BUILD_WEB)
    set(reason "it was configured with -DSCALELENS_BUILD_WEB=OFF")
  else()
    set(reason "node and npm were not found when scalelens was built")
    message(STATUS "scalelens: node/npm not found; report.html will say the interactive UI was not built")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -DMODE=fallback "-DREASON=${reason}" -DWEB_DIR=${SCALELENS_WEB_DIR}
                          -DOUT_DIR=${SCALELENS_WEB_OUT} -P ${SCALELENS_WEB_DIR}/build_web.cmake
                  COMMAND_ERROR_IS_FATAL ANY)
endif()
target_sources(scalelens_lib PRIVATE ${SCALELENS_WEB_CPP})

# Debian's libcpp-httplib-dev is a compiled library (libcpp-httplib.so) with its pkg-config file;
# a header-only httplib.h elsewhere works too.
pkg_check_modules(SCALELENS_HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
if(SCALELENS_HTTPLIB_FOUND)
  target_link_libraries(scalelens_lib PRIVATE PkgConfig::SCALELENS_HTTPLIB)
  target_compile_definitions(scalelens_lib PRIVATE SCALELENS_HAVE_HTTPLIB=1)
else()
  find_path(SCALELENS_HTTPLIB_INCLUDE httplib.h)
  if(SCALELENS_HTTPLIB_INCLUDE)
    target_include_directories(scalelens_lib PRIVATE ${SCALELENS_HTTPLIB_INCLUDE})
    target_compile_definitions(scalelens_lib PRIVATE SCALELENS_HAVE_HTTPLIB=1)
  else()
    message(STATUS "scalelens: cpp-httplib not found; `scalelens serve` will say so and exit")
  endif()
endif()
