
C
xPlaceholder*$
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
 
IdentityIdentityx*
T0"ª