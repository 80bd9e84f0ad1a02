/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal fake <ctype.h> for parsing device code with pycparser (tvmdev check). */
#ifndef TVMDEV_FAKE_CTYPE_H
#define TVMDEV_FAKE_CTYPE_H
int isalnum(int c);
int isalpha(int c);
int isdigit(int c);
int isspace(int c);
int isxdigit(int c);
int isprint(int c);
int isupper(int c);
int islower(int c);
int tolower(int c);
int toupper(int c);
#endif
